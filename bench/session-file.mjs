// Session files in the session store's own format (plugins/session-store/records.ts: a header line, then one
// `message` record a line), written for the benches that resume large sessions. Not a benchmark itself.
import { closeSync, openSync, writeSync } from 'node:fs';

/** Writes JSONL lines through a big buffer: generation must not dominate the bench's own time. */
export function lineWriter(file) {
  const fd = openSync(file, 'w');
  let chunks = [];
  let size = 0;
  let lines = 0;
  const flush = () => {
    if (!chunks.length) return;
    writeSync(fd, chunks.join(''));
    chunks = [];
    size = 0;
  };
  return {
    get lines() {
      return lines;
    },
    write(record) {
      const line = `${JSON.stringify(record)}\n`;
      chunks.push(line);
      size += line.length;
      lines++;
      if (size > 8 * 1024 * 1024) flush();
    },
    close() {
      flush();
      closeSync(fd);
    },
  };
}

export const header = (id, project) => ({ type: 'header', version: 1, id, cwd: project, projectRoot: project, model: 'claude-test', preset: 'minimal', createdAt: new Date().toISOString() });
export const words = 'the parser reads each token and the checker walks the tree to find where the types disagree '.repeat(40);

/** One exchange: a prompt, a tool call, its result, an answer (4 messages). `size` pads the texts. */
export function* exchange(n, size) {
  const text = words.slice(0, size);
  yield { role: 'user', content: `request ${n}: ${text}` };
  yield { role: 'assistant', content: [{ type: 'text', text: `looking ${n}` }, { type: 'tool_use', id: `toolu_${n}`, name: 'read_file', input: { path: `src/f${n}.ts` } }] };
  yield { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: text }] };
  yield { role: 'assistant', content: [{ type: 'text', text: `done ${n}: ${text.slice(0, size / 4)}` }] };
}

export function messageRecord(message, turns) {
  return message.role === 'assistant'
    ? { type: 'message', at: Date.now(), message, response: { model: 'claude-test', stopReason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }, stats: { turns, costUsd: turns * 0.001 } }
    : { type: 'message', at: Date.now(), message };
}

/** A session of `count` messages (prompt, tool call, tool result, answer, …), no compaction, at `file`. */
export function writeFlatSession(file, id, project, count) {
  const w = lineWriter(file);
  w.write(header(id, project));
  let turns = 0;
  for (let n = 0; w.lines - 1 < count; n++) {
    for (const message of exchange(n, 300)) {
      if (message.role === 'assistant') turns++;
      w.write(messageRecord(message, turns));
    }
  }
  w.close();
}
