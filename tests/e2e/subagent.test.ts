import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, say } from '../helpers/anthropic-server.js';
import { collect, ndjson, runKeel, spawnKeel } from '../helpers/cli.js';
import { conversation, routeConversations, toolNamesOf, toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';
import { until } from '../helpers/until.js';

const prepare = useScriptedProjects();

/** Live sub-agent processes of one test, found by their isolated KEEL_HOME. */
function subagentPids(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`KEEL_HOME=${home}`) && env.includes('KEEL_SUBAGENT_MODE=1')) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function sessionHeader(home: string, id: string): Record<string, unknown> {
  const root = path.join(home, 'sessions');
  for (const project of readdirSync(root)) {
    const file = path.join(root, project, `${id}.jsonl`);
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!);
  }
  throw new Error(`no session file for ${id}`);
}

describe('the agent tool and sub-agent mode', () => {
  it('runs three sub-agents in parallel and hands their answers, progress and usage to the parent', async () => {
    let arrived = 0;
    let releaseAll!: () => void;
    const allThere = new Promise<void>((resolve) => (releaseAll = resolve));
    // Each child's answer is held until all three children have asked: sequential runs would never finish.
    const child = (answer: string) => () => {
      if (++arrived === 3) releaseAll();
      return say(answer, { usage: { input_tokens: 100, output_tokens: 7 }, beforeEvent: () => allThere });
    };
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [
          callTools(
            { name: 'agent', input: { task: 'CHILD-A count the files' }, id: 'toolu_a' },
            { name: 'agent', input: { task: 'CHILD-B read the README' }, id: 'toolu_b' },
            { name: 'agent', input: { task: 'CHILD-C list the tests', context: 'tests live in tests/' }, id: 'toolu_c' },
          ),
          say('all three reported'),
        ],
        'CHILD-A': [child('answer A')],
        'CHILD-B': [child('answer B')],
        'CHILD-C': [child('answer C')],
      }),
    });
    const run = await runKeel(['-p', 'PARENT go', '--output-format', 'stream-json', '--allowedTools', 'Task'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const final = conversation(server.requests, 'PARENT')[1]!;
    expect(toolResultsOf(final)).toEqual([
      { tool_use_id: 'toolu_a', content: 'answer A', is_error: undefined },
      { tool_use_id: 'toolu_b', content: 'answer B', is_error: undefined },
      { tool_use_id: 'toolu_c', content: 'answer C', is_error: undefined },
    ]);
    // A fresh context: the child sees only its task (and the handed-over context).
    const childC = conversation(server.requests, 'CHILD-C')[0]!;
    expect(childC.body.messages).toHaveLength(1);
    expect(JSON.stringify(childC.body.messages[0].content)).toContain('tests live in tests/');

    const lines = ndjson(run.stdout);
    const parentId = lines[0].session_id;
    for (const [id, answer] of [['toolu_a', 'answer A'], ['toolu_b', 'answer B'], ['toolu_c', 'answer C']]) {
      const init = lines.find((l) => l.type === 'system' && l.subtype === 'init' && l.parent_tool_use_id === id);
      expect(init).toBeDefined();
      expect(init.parent_session_id).toBe(parentId);
      expect(lines.find((l) => l.type === 'assistant' && l.parent_tool_use_id === id)?.message.content[0].text).toBe(answer);
      // Each child keeps its own session file, linked to the parent's.
      expect(sessionHeader(ws.home, init.session_id).parent).toBe(parentId);
    }
    const result = lines[lines.length - 1];
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'all three reported', session_id: parentId });
    // Two parent calls of 10 input tokens, three children of 100.
    expect(result.usage.input_tokens).toBe(320);
    expect(result.usage.output_tokens).toBe(5 + 5 + 21);
  }, 90_000);

  it('gives a sub-agent only the tools it was given, never more than the parent has', async () => {
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [
          callTools(
            { name: 'agent', input: { task: 'CHILD read it', tools: ['Read'] }, id: 'toolu_r' },
            { name: 'agent', input: { task: 'CHILD2 run it', tools: ['bash'] }, id: 'toolu_x' },
          ),
          say('done'),
        ],
        CHILD: [callTool('write_file', { path: 'stolen.txt', content: 'x' }, 'toolu_w'), say('I could not write')],
      }),
    });
    const run = await runKeel(['-p', 'PARENT go', '--tools', 'Task,read_file,write_file', '--permission-mode', 'auto'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const [first, second] = conversation(server.requests, 'CHILD ');
    expect(toolNamesOf(first!)).toEqual(['read_file']);
    expect(toolResultsOf(second!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('not among the tools this agent was given') });
    expect(existsSync(ws.path('stolen.txt'))).toBe(false);
    // The parent has no bash, so it cannot hand bash down.
    expect(conversation(server.requests, 'CHILD2')).toHaveLength(0);
    const results = toolResultsOf(conversation(server.requests, 'PARENT')[1]!);
    expect(results[0]).toMatchObject({ content: 'I could not write' });
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringContaining('tools: bash is not among this agent') });
  });

  it("hands the parent's flag rules down: a tool denied to the parent stays denied to its sub-agent", async () => {
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task: 'CHILD try it' }, 'toolu_d'), say('done')],
        CHILD: [callTool('write_file', { path: 'secret/x.txt', content: 'x' }, 'toolu_s'), say('refused')],
      }),
    });
    const run = await runKeel(['-p', 'PARENT go', '--permission-mode', 'auto', '--disallowedTools', 'Write(secret/**)'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(toolResultsOf(conversation(server.requests, 'CHILD')[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('denied by the rule "Write(secret/**)"') });
    expect(existsSync(ws.path('secret/x.txt'))).toBe(false);
  });

  it('kills every sub-agent process group when the parent is interrupted', async () => {
    let childAsked = 0;
    const { env, ws } = await prepare([], {
      route: routeConversations({
        PARENT: [callTools({ name: 'agent', input: { task: 'CHILD-1 wait' } }, { name: 'agent', input: { task: 'CHILD-2 wait' } })],
        'CHILD-1': [() => (childAsked++, { fault: 'hang' })],
        'CHILD-2': [() => (childAsked++, { fault: 'hang' })],
      }),
    });
    const parent = spawnKeel(['-p', 'PARENT go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    const done = collect(parent, 60_000);
    await until(() => childAsked === 2, 'both sub-agents to call the model');
    const children = subagentPids(ws.home);
    expect(children).toHaveLength(2);
    parent.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    await until(() => children.every((pid) => !groupAlive(pid)), 'the sub-agent groups to be gone');
    expect(subagentPids(ws.home)).toEqual([]);
  }, 90_000);

  it('stops at the depth limit', async () => {
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task: 'CHILD go deeper' }, 'toolu_deep'), say('ok')],
        CHILD: [callTool('agent', { task: 'GRANDCHILD never' }, 'toolu_g'), say('no deeper')],
      }),
    });
    ws.write('agent.config.json', JSON.stringify({ subagents: { maxDepth: 1 } }));
    const run = await runKeel(['-p', 'PARENT go', '--permission-mode', 'auto', '--trust'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const [childFirst, childSecond] = conversation(server.requests, 'CHILD');
    // At the deepest level the agent tool is not offered, and a call to it is refused.
    expect(toolNamesOf(childFirst!)).not.toContain('agent');
    expect(toolResultsOf(childSecond!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('not among the tools') });
    expect(conversation(server.requests, 'GRANDCHILD')).toHaveLength(0);

    // An agent already at the limit gets the depth error itself.
    const deep = await prepare([], { route: routeConversations({ TOP: [callTool('agent', { task: 'NEVER' }, 'toolu_n'), say('fine')] }) });
    const atLimit = await runKeel(['-p', 'TOP go', '--permission-mode', 'auto'], { cwd: deep.ws.dir, env: { ...deep.env, KEEL_AGENT_DEPTH: '2' } });
    expect(atLimit.code).toBe(0);
    expect(toolResultsOf(conversation(deep.server.requests, 'TOP')[1]!)[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('sub-agents may nest 2 deep (config subagents.maxDepth)'),
    });
  }, 90_000);

  it('nests to the default depth of 2 and relays a grandchild\'s lines under its own parent call', async () => {
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task: 'CHILD delegate again' }, 'toolu_p'), say('top done')],
        CHILD: [callTool('agent', { task: 'GRAND do it' }, 'toolu_c'), say('child done')],
        GRAND: [say('grand done')],
      }),
    });
    const run = await runKeel(['-p', 'PARENT go', '--permission-mode', 'auto', '--output-format', 'stream-json'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(toolNamesOf(conversation(server.requests, 'CHILD')[0]!)).toContain('agent');
    expect(toolNamesOf(conversation(server.requests, 'GRAND')[0]!)).not.toContain('agent');
    const lines = ndjson(run.stdout);
    const said = (id: string) => lines.filter((l) => l.type === 'assistant' && l.parent_tool_use_id === id).map((l) => l.message.content.find((b: { type: string }) => b.type === 'text')?.text);
    expect(said('toolu_c')).toEqual(['grand done']);
    expect(said('toolu_p')).toEqual([undefined, 'child done']);
    expect(lines[lines.length - 1]).toMatchObject({ type: 'result', result: 'top done' });
  }, 90_000);

  it('runs custom agents from a trusted project\'s .keel/agents and Claude Code .claude/agents files', async () => {
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [
          callTools(
            { name: 'agent', input: { task: 'KEEL-AGENT review', subagent_type: 'reviewer' }, id: 'toolu_k' },
            { name: 'agent', input: { task: 'CLAUDE-AGENT find', subagent_type: 'finder' }, id: 'toolu_c' },
            { name: 'agent', input: { task: 'BROKEN x', subagent_type: 'broken' }, id: 'toolu_b' },
          ),
          say('done'),
        ],
        'KEEL-AGENT': [say('reviewed')],
        'CLAUDE-AGENT': [say('found')],
      }),
    });
    ws.write('.keel/agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews diffs for bugs\ntools: [read_file, grep]\nmodel: claude-review-model\n---\nYou are a careful reviewer.\n');
    ws.write('.claude/agents/finder.md', '---\nname: finder\ndescription: Finds code\ntools: Read, Glob\nmodel: inherit\n---\nYou find code fast.\n');
    ws.write('.claude/agents/broken.md', '---\ndescription: [unclosed\n---\nbody\n');
    mkdirSync(path.join(ws.home, 'agents'), { recursive: true });
    writeFileSync(path.join(ws.home, 'agents', 'mine.md'), '---\ndescription: The user\'s own helper\n---\nYou help.\n');
    const run = await runKeel(['-p', 'PARENT go', '--permission-mode', 'auto', '--model', 'claude-parent-model', '--trust'], { cwd: ws.dir, env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('broken.md: front matter is not valid YAML');
    const parentFirst = conversation(server.requests, 'PARENT')[0]!;
    const description = parentFirst.body.tools.find((t: { name: string }) => t.name === 'agent').description;
    expect(description).toContain('- reviewer: Reviews diffs for bugs (tools: read_file, grep)');
    expect(description).toContain('- finder: Finds code (tools: read_file, glob)');
    expect(description).toContain("- mine: The user's own helper");

    const keelAgent = conversation(server.requests, 'KEEL-AGENT')[0]!;
    expect(keelAgent.body.model).toBe('claude-review-model');
    expect(keelAgent.body.system[0].text).toBe('You are a careful reviewer.');
    expect(toolNamesOf(keelAgent)).toEqual(['read_file', 'grep']);
    const claudeAgent = conversation(server.requests, 'CLAUDE-AGENT')[0]!;
    expect(claudeAgent.body.model).toBe('claude-parent-model');
    expect(claudeAgent.body.system[0].text).toBe('You find code fast.');
    expect(toolNamesOf(claudeAgent)).toEqual(['read_file', 'glob']);

    const results = toolResultsOf(conversation(server.requests, 'PARENT')[1]!);
    expect(results.map((r) => r.content)).toEqual(['reviewed', 'found', expect.stringContaining('subagent_type "broken" cannot be used')]);
    expect(results[2]!.content).toContain('broken.md');
  });
});
