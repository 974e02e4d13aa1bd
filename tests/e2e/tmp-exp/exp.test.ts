import net from 'node:net';
import { afterAll, beforeAll, it } from 'vitest';
import { say } from '../../helpers/anthropic-server.js';
import { runKeel } from '../../helpers/cli.js';
import { makePki, type Pki } from '../../helpers/pki.js';
import { useScriptedProjects } from '../../helpers/project.js';
const prepare = useScriptedProjects();
let pki: Pki;
beforeAll(() => { pki = makePki(); });
afterAll(() => pki.cleanup());
it('bad CA path', async () => {
  const project = await prepare([say('ok')], { tls: pki.server });
  const run = await runKeel(['-p', 'hi'], { cwd: project.ws.dir, env: { ...project.env, NODE_EXTRA_CA_CERTS: '/nonexistent/ca.pem' }, timeoutMs: 60_000 });
  console.log('BADCA', JSON.stringify(run));
}, 90_000);
it('stalling proxy', async () => {
  const server = net.createServer((s) => { s.on('data', () => {}); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  const project = await prepare([say('ok')], { tls: pki.server });
  project.ws.write('agent.config.ts', 'export default { retry: { maxRetries: 1, baseDelayMs: 10, firstByteTimeoutMs: 2000 } };\n');
  const run = await runKeel(['-p', 'hi', '--trust'], { cwd: project.ws.dir, env: { ...project.env, NODE_EXTRA_CA_CERTS: pki.caFile, HTTPS_PROXY: `http://bob:secretpw@127.0.0.1:${port}` }, timeoutMs: 60_000 });
  console.log('STALL', JSON.stringify(run));
  server.close();
}, 90_000);
