/** Which proxy a URL takes: the variables by scheme (lower case first), NO_PROXY's forms, and how proxies are named. */
import { describe, expect, it } from 'vitest';
import { parseProxy, ProxyTable } from '../../../plugins/network/proxy.js';
import { settingsOf } from '../../../plugins/network/settings.js';

const table = (env: Record<string, string>) => new ProxyTable(settingsOf(env, undefined, '/work'));
const via = (env: Record<string, string>, url: string) => {
  const choice = table(env).choose(new URL(url));
  return choice.proxy ? `${choice.proxy.shown} (${choice.proxy.source})` : choice.why === 'no_proxy' ? `bypass ${choice.entry}` : 'none';
};

describe('the proxy variables', () => {
  it('HTTPS_PROXY serves https URLs and HTTP_PROXY http ones; the lower-case form wins; empty is unset', () => {
    const env = { HTTPS_PROXY: 'http://upper:3128', https_proxy: 'http://lower:3128', HTTP_PROXY: 'plain:8080', http_proxy: '' };
    expect(via(env, 'https://api.anthropic.com/v1')).toBe('http://lower:3128 (https_proxy)');
    expect(via(env, 'http://intranet/x')).toBe('http://plain:8080 (HTTP_PROXY)');
    expect(via({ HTTP_PROXY: 'http://p:1' }, 'https://api.anthropic.com')).toBe('none');
  });

  it('names a proxy with its user and never its password; credentials become Basic authorization', () => {
    const proxy = parseProxy({ value: 'http://al%40ice:p%3Ass@proxy.corp:3128', source: 'HTTPS_PROXY' });
    expect(proxy.shown).toBe('http://al%40ice@proxy.corp:3128');
    expect(proxy.authorization).toBe(`Basic ${Buffer.from('al@ice:p:ss').toString('base64')}`);
    expect(parseProxy({ value: 'http://proxy.corp', source: 'HTTP_PROXY' }).port).toBe(80);
    expect(parseProxy({ value: 'https://proxy.corp', source: 'HTTP_PROXY' }).port).toBe(443);
  });

  it('refuses what it cannot use, naming the variable and never the password', () => {
    expect(() => parseProxy({ value: 'socks5://u:pw@127.0.0.1:1080', source: 'https_proxy' })).toThrow('https_proxy: proxy socks5://u@127.0.0.1:1080 uses socks5, which Keel does not support');
    expect(() => parseProxy({ value: 'http://u:pw@[not', source: 'HTTPS_PROXY' })).toThrow(/^HTTPS_PROXY: not a proxy URL: "http:\/\/u@\[not"$/);
    // Without a scheme, or with a `/` in the password (not percent-encoded), the password is still left out.
    expect(() => parseProxy({ value: 'alice:s3/cret@[not', source: 'HTTPS_PROXY' })).toThrow(/^HTTPS_PROXY: not a proxy URL: "alice@\[not"$/);
    expect(() => parseProxy({ value: 'http://alice:s3/cret@proxy.corp:3128', source: 'https_proxy' })).toThrow(/^https_proxy: not a proxy URL: "http:\/\/alice@proxy\.corp:3128"$/);
    expect(() => parseProxy({ value: 'alice:s3/cret@proxy.corp:3128', source: 'HTTP_PROXY' })).toThrow(/^HTTP_PROXY: not a proxy URL: "alice@proxy\.corp:3128"$/);
  });
});

describe('NO_PROXY', () => {
  const proxied = { HTTPS_PROXY: 'http://p:3128', HTTP_PROXY: 'http://p:3128' };
  const cases: Array<[string, string, string]> = [
    ['*', 'https://anything.example', 'bypass *'],
    ['example.com', 'https://example.com', 'bypass example.com'],
    ['example.com', 'https://api.example.com', 'bypass example.com'],
    ['example.com', 'https://notexample.com', 'proxy'],
    ['.example.com', 'https://example.com', 'bypass .example.com'],
    ['.example.com', 'https://a.b.example.com', 'bypass .example.com'],
    ['*.example.com', 'https://a.example.com', 'bypass *.example.com'],
    ['EXAMPLE.com', 'https://Api.Example.COM.', 'bypass EXAMPLE.com'],
    ['example.com.', 'https://api.example.com', 'bypass example.com.'],
    ['.example.com.', 'https://example.com.', 'bypass .example.com.'],
    ['example.com:8443', 'https://example.com:8443', 'bypass example.com:8443'],
    ['example.com:8443', 'https://example.com', 'proxy'],
    ['example.com:443', 'https://example.com', 'bypass example.com:443'],
    ['10.0.0.0/8', 'https://10.20.30.40', 'bypass 10.0.0.0/8'],
    ['10.0.0.0/8', 'https://11.0.0.1', 'proxy'],
    ['10.0.0.0/8', 'https://ten.example', 'proxy'],
    ['192.168.1.5', 'http://192.168.1.5:8080', 'bypass 192.168.1.5'],
    ['fd00::/8', 'https://[fd12::1]', 'bypass fd00::/8'],
    ['fd00::/8', 'https://[fe80::1]', 'proxy'],
    ['::1', 'https://[::1]:9000', 'bypass ::1'],
    ['[::1]:9000', 'https://[::1]:9000', 'bypass [::1]:9000'],
    ['[::1]:9000', 'https://[::1]:9001', 'proxy'],
    ['localhost 127.0.0.0/8,  internal', 'https://internal', 'bypass internal'],
    ['', 'https://example.com', 'proxy'],
  ];
  it.each(cases)('NO_PROXY=%j, %s → %s', (noProxy, url, expected) => {
    const got = via({ ...proxied, ...(noProxy ? { NO_PROXY: noProxy } : {}) }, url);
    expect(got).toBe(expected === 'proxy' ? 'http://p:3128 (HTTPS_PROXY)'.replace('HTTPS_PROXY', url.startsWith('https') ? 'HTTPS_PROXY' : 'HTTP_PROXY') : expected);
  });
});

describe('settings', () => {
  it('nothing set: not configured, so nothing loads', () => {
    expect(settingsOf({ PATH: '/bin', NODE_EXTRA_CA_CERTS: '/ca.pem' }, {}, '/work').configured).toBe(false);
  });

  it('a client certificate from the variables outranks the config; config paths resolve from the working folder', () => {
    const fromConfig = settingsOf({}, { clientCert: 'certs/c.pem', clientKey: '/abs/k.pem', clientKeyPassphrase: '' }, '/work');
    expect(fromConfig).toMatchObject({ configured: true, clientCert: { value: '/work/certs/c.pem', source: 'config network.clientCert' }, clientKey: { value: '/abs/k.pem' }, passphrase: { value: '', source: 'config network.clientKeyPassphrase' } });
    const fromEnv = settingsOf({ CLAUDE_CODE_CLIENT_CERT: '/env/c.pem', CLAUDE_CODE_CLIENT_KEY_PASSPHRASE: 'pw' }, { clientCert: 'certs/c.pem' }, '/work');
    expect(fromEnv).toMatchObject({ clientCert: { value: '/env/c.pem', source: 'CLAUDE_CODE_CLIENT_CERT' }, passphrase: { value: 'pw', source: 'CLAUDE_CODE_CLIENT_KEY_PASSPHRASE' } });
  });
});
