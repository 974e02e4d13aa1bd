/**
 * `keel login`: reads an Anthropic API key (without echo on a terminal, else the first line of stdin), checks it
 * with the API and stores it in `$KEEL_HOME/auth.json` (0600), where the CLI reads it when no key is set.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDir, errorMessage, KeelError, type Io, type Kernel } from '../../kernel/index.js';

export async function login(kernel: Kernel, io: Io, verify: (key: string) => Promise<void>): Promise<number> {
  const key = (await readSecret('Anthropic API key: ', io)).trim();
  if (!key) throw new KeelError('login: no key entered');
  try {
    await verify(key);
  } catch (err) {
    throw new KeelError(`login: the key was refused: ${errorMessage(err)}`);
  }
  const file = storeApiKey(kernel.config.keelHome, key);
  io.stdout.write(`Key stored in ${file} (checked with the API)\n`);
  return 0;
}

export function storeApiKey(home: string, apiKey: string): string {
  ensureDir(home);
  const file = path.join(home, 'auth.json');
  writeFileSync(file, `${JSON.stringify({ apiKey }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** One line without echoing it when stdin is a terminal; otherwise all of stdin. */
async function readSecret(prompt: string, io: Io): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  if (!stdin.isTTY) return readAll(stdin);
  io.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          io.stderr.write('\n');
          resolve(value);
          return;
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}
