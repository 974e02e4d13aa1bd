/**
 * The Keel GitHub Action. With `prompt`, a plain automated run; otherwise an @mention (the trigger phrase) in an
 * issue comment, a review comment, an issue or a pull request by someone with write access (or a listed bot)
 * starts a run on the sanitized request and its context, answered in one comment that shows progress first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as core from '@actions/core';
import { Octokit } from '@octokit/rest';
import { splitArgs } from './args.js';
import { finalBody, progressBody } from './comment.js';
import { findTrigger, type Trigger } from './event.js';
import { buildPrompt } from './prompt.js';
import { redactor, redactValue, checkoutCredentials, MIN_SECRET, type Redact } from './redact.js';
import { runKeel, type KeelOutcome } from './run-keel.js';
import { runnerTrusts } from './trust.js';
import { publishable } from './publish.js';
import { imagePolicy, parseImagePrefixes } from './image-policy.js';
import { hiddenFromCommands, keelEnvironment, parseAllowedEnv, type KeelEnvironment } from './keel-env.js';
import { hideFromEnvironBlock } from '../../../plugins/tool-bash/environ-block.js';
import { isScrubbed } from '../../../plugins/tool-bash/scrub.js';

/** How often the progress comment may be edited while Keel works (KEEL_ACTION_PROGRESS_MS overrides it). */
const PROGRESS_EVERY_MS = interval(process.env.KEEL_ACTION_PROGRESS_MS, 5_000);

function interval(value: string | undefined, fallback: number): number {
  const ms = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isFinite(ms) && ms >= 0 ? ms : fallback;
}

interface Inputs {
  keelBin: string;
  prompt: string;
  keelArgs: string;
  apiKey: string;
  baseUrl: string;
  token: string;
  phrase: string;
  allowedBots: string[];
  allowedTools: string;
  permissionMode: string;
  maxTurns: string;
  maxBudgetUsd: string;
  jsonSchema: string;
  allowedEnv: string[];
  allowedImageUrls: string[];
}

function readInputs(): Inputs {
  return {
    keelBin: core.getInput('keel_bin'),
    prompt: core.getInput('prompt'),
    keelArgs: core.getInput('keel_args'),
    apiKey: core.getInput('anthropic_api_key'),
    baseUrl: core.getInput('base_url'),
    token: core.getInput('github_token'),
    phrase: core.getInput('trigger_phrase') || '@keel',
    allowedBots: core.getInput('allowed_bots').split(',').map((b) => b.trim().toLowerCase()).filter(Boolean),
    allowedTools: core.getInput('allowed_tools'),
    permissionMode: core.getInput('permission_mode') || 'edits',
    maxTurns: core.getInput('max_turns'),
    maxBudgetUsd: core.getInput('max_budget_usd'),
    jsonSchema: core.getInput('json_schema'),
    allowedEnv: parseAllowedEnv(core.getInput('allowed_env')),
    allowedImageUrls: parseImagePrefixes(core.getInput('allowed_image_urls')),
  };
}

/** Whether this person may start a run: write access to the repository, or a bot on the list. */
async function mayTrigger(octokit: Octokit, owner: string, repo: string, trigger: Trigger, bots: string[]): Promise<boolean> {
  if (!trigger.actor) return false;
  if (trigger.actorIsBot || trigger.actor.endsWith('[bot]')) return bots.includes(trigger.actor.toLowerCase());
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: trigger.actor });
    return ['admin', 'write'].includes(data.permission) || ['admin', 'maintain', 'write'].includes(String(data.role_name ?? ''));
  } catch (err) {
    if ((err as { status?: number }).status === 404) return false;
    throw err;
  }
}

/** The Keel to run: `keel_bin`, or this repository's, installed and built the first time. */
function resolveKeel(keelBin: string): { command: string; args: string[] } {
  if (keelBin) {
    const [command, ...args] = splitArgs(keelBin, 'keel_bin');
    if (!command) throw new Error('keel_bin: empty');
    return { command, args };
  }
  const root = path.resolve(__dirname, '..', '..', '..');
  const bin = path.join(root, 'bin', 'keel.js');
  if (!existsSync(bin)) throw new Error(`keel_bin is not set and ${bin} does not exist: set keel_bin (e.g. "npx -y keel")`);
  if (!existsSync(path.join(root, 'dist', 'bin'))) {
    core.startGroup('Installing and building Keel');
    for (const args of [['ci', '--no-audit', '--no-fund'], ['run', 'build']]) {
      const done = spawnSync('npm', args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
      if (done.status !== 0) throw new Error(`npm ${args.join(' ')} in ${root} failed (exit ${done.status})`);
    }
    core.endGroup();
  }
  return { command: process.execPath, args: [bin] };
}

/** The sandbox needs unprivileged user namespaces, which some runners (Ubuntu 24.04's AppArmor) refuse. */
function sandboxWorks(): boolean {
  const probe = spawnSync('bwrap', ['--unshare-user', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'], { stdio: 'ignore', timeout: 10_000 });
  return probe.status === 0;
}

function keelArgs(inputs: Inputs): string[] {
  const args = ['--permission-mode', inputs.permissionMode];
  if (sandboxWorks()) args.push('--settings', JSON.stringify({ sandbox: { enabled: true } }));
  else core.warning('Keel runs without its bash sandbox: bubblewrap is missing or this runner refuses user namespaces');
  if (inputs.allowedTools) args.push('--allowedTools', inputs.allowedTools);
  if (inputs.maxTurns) args.push('--max-turns', inputs.maxTurns);
  if (inputs.maxBudgetUsd) args.push('--max-budget-usd', inputs.maxBudgetUsd);
  if (inputs.jsonSchema) args.push('--json-schema', inputs.jsonSchema);
  // Last, so a workflow's own flags win.
  if (inputs.keelArgs) args.push(...splitArgs(inputs.keelArgs, 'keel_args'));
  return args;
}

/** Keel's environment (see keel-env.ts): an allow list, never the job's whole `env:`. */
function keelEnv(inputs: Inputs): KeelEnvironment {
  const built = keelEnvironment(process.env, { allowed: inputs.allowedEnv, apiKey: inputs.apiKey, baseUrl: inputs.baseUrl, token: inputs.token });
  for (const name of built.missing) core.warning(`allowed_env: ${name} is not set in this step's environment; Keel runs without it`);
  return built;
}

/**
 * Clears from this process's /proc/<pid>/environ every variable Keel's commands do not get (the inputs, the tokens,
 * the job's `env:` secrets), which a command could otherwise read there; process.env keeps them for the action.
 */
function hideOwnEnviron(keel: KeelEnvironment): void {
  const result = hideFromEnvironBlock(hiddenFromCommands({ ...process.env }, keel.env, isScrubbed));
  if (result.hidden.length) core.debug(`cleared ${result.hidden.length} variables from /proc/${process.pid}/environ`);
  if (!result.reason) return;
  const note = `the action's variables stay readable in /proc/${process.pid}/environ: ${result.reason}`;
  if (process.platform === 'linux') core.warning(note);
  else core.debug(note);
}

/** The run as the action reports it: every text Keel produced, with the known secrets replaced. */
function redactOutcome(outcome: KeelOutcome, redact: Redact): KeelOutcome {
  return { ...outcome, stderr: redact(outcome.stderr), steps: outcome.steps.map(redact), ...(outcome.result ? { result: redactValue(outcome.result, redact) as KeelOutcome['result'] } : {}) };
}

function reasonOf(outcome: KeelOutcome): string {
  const r = outcome.result;
  if (r?.is_error) return r.errors?.[0] ?? r.subtype;
  const line = outcome.stderr.split('\n').filter(Boolean).pop();
  return line ?? `keel exited with ${outcome.exitCode}`;
}

async function writeSummary(outcome: KeelOutcome, failed: boolean, reason: string, runUrl: string, publish: Publish): Promise<void> {
  const r = outcome.result;
  const summary = core.summary.addHeading(failed ? 'Keel: failed' : 'Keel: done', 2);
  summary.addTable([
    [{ data: 'conclusion', header: true }, { data: 'turns', header: true }, { data: 'cost (USD)', header: true }, { data: 'session', header: true }],
    [failed ? 'failure' : 'success', String(r?.num_turns ?? '—'), r ? r.total_cost_usd.toFixed(4) : '—', r?.session_id ?? '—'],
  ]);
  if (outcome.steps.length) summary.addHeading('Steps', 3).addList(outcome.steps.map((s) => s.replace(/</g, '&lt;')));
  summary.addHeading(failed ? 'Why' : 'Answer', 3);
  if (failed) summary.addCodeBlock(reason);
  else if (r?.structured_output !== undefined) summary.addCodeBlock(JSON.stringify(r.structured_output, null, 2), 'json');
  else summary.addRaw(r?.result ?? '', true);
  summary.addLink('The run', runUrl);
  // The summary renders on the run's page like a comment: the same images are neutralised.
  const text = publish(summary.stringify());
  await summary.emptyBuffer().addRaw(text).write();
}

/** Text about to be posted to GitHub (a comment, the job summary): secrets redacted, off-list images neutralised. */
type Publish = (text: string) => string;

export async function run(): Promise<void> {
  const inputs = readInputs();
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const environment = keelEnv(inputs);
  // Before anything is spawned (the sandbox probe, an install, Keel).
  hideOwnEnviron(environment);
  // Masked before anything can print them, and redacted from everything posted (a comment is not masked).
  const secrets = [inputs.apiKey, inputs.token, ...checkoutCredentials(workspace), ...environment.secrets].filter(Boolean);
  for (const secret of secrets) if (secret.length >= MIN_SECRET) core.setSecret(secret);
  const redact = redactor(secrets);
  const repository = process.env.GITHUB_REPOSITORY ?? '';
  const allowsImage = imagePolicy({ serverUrl: process.env.GITHUB_SERVER_URL ?? 'https://github.com', repository, extra: inputs.allowedImageUrls });
  const publish: Publish = (text) => publishable(text, redact, allowsImage);
  const [owner = '', repo = ''] = repository.split('/');
  const runUrl = `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${repository}/actions/runs/${process.env.GITHUB_RUN_ID ?? ''}`;
  const octokit = new Octokit({ auth: inputs.token || undefined, baseUrl: process.env.GITHUB_API_URL ?? 'https://api.github.com', userAgent: 'keel-github-action' });
  const skip = (why: string) => {
    core.info(why);
    core.setOutput('conclusion', 'skipped');
  };

  let prompt = inputs.prompt;
  let trigger: Trigger | undefined;
  if (!prompt) {
    const eventPath = process.env.GITHUB_EVENT_PATH;
    if (!eventPath) throw new Error('neither the prompt input nor GITHUB_EVENT_PATH is set');
    const found = findTrigger(process.env.GITHUB_EVENT_NAME ?? '', JSON.parse(readFileSync(eventPath, 'utf8')), inputs.phrase);
    if ('skip' in found) return skip(`Nothing to do: ${found.skip}.`);
    if (!(await mayTrigger(octokit, owner, repo, found, inputs.allowedBots))) {
      core.warning(`@${found.actor} may not start Keel here: it needs write access to ${repository}${found.actorIsBot ? ' (or the bot in allowed_bots)' : ''}. Nothing was run.`);
      return skip('Not allowed.');
    }
    trigger = found;
    let diff: string | undefined;
    if (found.isPullRequest) {
      const response = await octokit.rest.pulls.get({ owner, repo, pull_number: found.number, mediaType: { format: 'diff' } });
      diff = String(response.data);
    }
    prompt = buildPrompt(found, repository, diff);
  }

  let commentId: number | undefined;
  const updateComment = async (body: string) => {
    if (commentId !== undefined) await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body: publish(body) });
  };
  if (trigger) {
    const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: trigger.number, body: publish(progressBody(runUrl, [])) });
    commentId = data.id;
  }

  let outcome: KeelOutcome;
  try {
    const args = keelArgs(inputs);
    const trusted = args.includes('--trust') ? undefined : runnerTrusts(workspace, process.env);
    if (trusted) {
      throw new Error(
        `${trusted.file} trusts ${trusted.folder}, which holds the checkout ${workspace}: Keel would run the checkout's agent.config.*, MCP servers and hooks, which a pull request can change. Remove that entry on this runner, or pass --trust in keel_args for workflows on trusted branches only.`,
      );
    }
    const keel = resolveKeel(inputs.keelBin);
    let lastUpdate = PROGRESS_EVERY_MS === 0 ? 0 : Date.now();
    let progress: Promise<void> = Promise.resolve();
    outcome = await runKeel({ command: keel.command, args: [...keel.args, ...args], prompt, env: environment.env, cwd: workspace }, (steps) => {
      if (commentId === undefined || Date.now() - lastUpdate < PROGRESS_EVERY_MS) return;
      lastUpdate = Date.now();
      progress = progress.then(() => updateComment(progressBody(runUrl, steps.map(redact)))).catch((err: unknown) => core.warning(`updating the progress comment failed: ${String(err)}`));
    });
    await progress;
  } catch (err) {
    // Keel never started (no executable, a failed install): the comment still gets the answer.
    outcome = { exitCode: null, stderr: err instanceof Error ? err.message : String(err), steps: [] };
  }

  outcome = redactOutcome(outcome, redact);
  const result = outcome.result;
  const failed = !result || result.is_error || outcome.exitCode !== 0;
  const reason = reasonOf(outcome);
  await updateComment(finalBody(runUrl, outcome, failed, reason));
  core.setOutput('result', result?.result ?? '');
  core.setOutput('structured_output', result?.structured_output === undefined ? '' : JSON.stringify(result.structured_output));
  core.setOutput('session_id', result?.session_id ?? '');
  core.setOutput('cost_usd', result ? String(result.total_cost_usd) : '0');
  core.setOutput('conclusion', failed ? 'failure' : 'success');
  try {
    await writeSummary(outcome, failed, reason, runUrl, publish);
  } catch (err) {
    core.warning(`the job summary could not be written: ${String(err)}`);
  }
  if (failed) core.setFailed(`Keel: ${reason}`);
}

run().catch((err: unknown) => core.setFailed(`Keel action: ${err instanceof Error ? err.message : String(err)}`));
