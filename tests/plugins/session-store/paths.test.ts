import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { projectSlug, sessionsRoot } from '../../../plugins/session-store/paths.js';
import { harness } from './setup.js';

describe('where sessions live', () => {
  it('names a project folder after its root: every run of other characters than letters, digits, "." and "_" becomes "-"', () => {
    expect(projectSlug('/home/me/app')).toBe('-home-me-app');
    expect(projectSlug('/srv/My Project (v2.1)/x_y')).toBe('-srv-My-Project-v2.1-x_y');
    expect(sessionsRoot('')).toMatch(/\/\.keel\/sessions$/);
  });

  it('keeps a slug of up to 120 characters whole; a longer one is its first 100 plus a hash, so two never collide', () => {
    const whole = `/${'a'.repeat(119)}`;
    expect(projectSlug(whole)).toBe(`-${'a'.repeat(119)}`);
    const long = `/${'b'.repeat(150)}`;
    const other = `/${'b'.repeat(151)}`;
    expect(projectSlug(long)).toMatch(new RegExp(`^-${'b'.repeat(99)}-[0-9a-f]{12}$`));
    expect(projectSlug(long)).not.toBe(projectSlug(other));
  });
});

describe('what a session creates on disk', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  it('folders 0700 and files 0600: the sessions folders, the session, its side-file folder and side files', async () => {
    ws = makeWorkspace();
    server = await startAnthropicServer([callTool('echo', { text: 'z', times: 5000 }, 'toolu_side'), say('ok')]);
    const h = harness(server, ws, { sideFileBytes: 100 });
    const session = await h.start();
    await h.run(session, 'big output please');
    const file = h.store.fileOf(session)!;
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(file)).toBe(0o600);
    expect(mode(path.dirname(file))).toBe(0o700);
    expect(mode(sessionsRoot(ws.home))).toBe(0o700);
    const side = path.join(path.dirname(file), session.id);
    expect(mode(side)).toBe(0o700);
    const [sideFile] = readdirSync(side);
    expect(mode(path.join(side, sideFile!))).toBe(0o600);
  });
});
