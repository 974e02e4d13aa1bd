/** The action's redaction: the secrets it knows, and the credentials actions/checkout left in the checkout's git config. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutCredentials, redactor, redactValue } from '../../integrations/github-action/src/redact.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the GitHub Action redaction', () => {
  it('replaces every known secret, the longest first, in text and inside JSON values; short values are not secrets', () => {
    const redact = redactor(['ghs_abcdefgh', 'ghs_abcdefgh_longer', 'short', '']);
    expect(redact('a ghs_abcdefgh_longer and ghs_abcdefgh, short')).toBe('a *** and ***, short');
    expect(redactValue({ list: ['ghs_abcdefgh'], n: 1, nested: { ghs_abcdefgh: true } }, redact)).toEqual({ list: ['***'], n: 1, nested: { '***': true } });
  });

  it("finds the checkout's persisted token, also in a config file the repository's config includes (checkout v6)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-redact-'));
    dirs.push(dir);
    const repo = path.join(dir, 'repo');
    execFileSync('git', ['init', '--quiet', repo]);
    const header = Buffer.from('x-access-token:ghs_INCLUDEDtoken12345').toString('base64');
    const included = path.join(dir, 'git-credentials.config');
    writeFileSync(included, `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${header}\n`);
    execFileSync('git', ['-C', repo, 'config', '--local', 'include.path', included]);
    expect(checkoutCredentials(repo)).toEqual([header, 'ghs_INCLUDEDtoken12345', 'x-access-token:ghs_INCLUDEDtoken12345']);
    expect(checkoutCredentials(dir)).toEqual([]);
  });
});
