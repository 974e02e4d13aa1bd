/** `keel doctor`: what Keel needs, checked, with what to fix. Plugins may add checks as `doctor:<name>` services. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import which from 'which';
import type { Kernel } from '../../kernel/index.js';

export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** What was found, or what to do about it. */
  detail: string;
  /** A failure that stops Keel from working (else a warning). */
  required?: boolean;
}

/** A plugin's checks, offered as the service `doctor:<plugin>`. */
export interface DoctorService {
  checks(): Promise<DoctorCheck[]> | DoctorCheck[];
}

/** `name` on `env.PATH`, as the plugins that run it find it (an empty entry is not the working folder). */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean).join(path.delimiter);
  return (dirs && which.sync(name, { path: dirs, nothrow: true })) || undefined;
}

export async function runDoctor(kernel: Kernel, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({ name: 'node', ok: major >= 20, required: true, detail: major >= 20 ? `Node ${process.version}` : `Node ${process.version} is too old: install Node 20 or newer` });

  checks.push(startUpCheck());

  const provider = kernel.config.provider ?? 'anthropic';
  const authFile = path.join(kernel.config.keelHome, 'auth.json');
  let keySource: string | undefined;
  // The CLI labels a key from the environment `env` and one from `keel login` with auth.json's path.
  if (kernel.config.sources.apiKey) keySource = kernel.config.sources.apiKey === 'env' ? 'ANTHROPIC_API_KEY' : kernel.config.sources.apiKey;
  else if (env.ANTHROPIC_API_KEY) keySource = 'ANTHROPIC_API_KEY';
  else if (existsSync(authFile)) keySource = authFile;
  checks.push(
    provider === 'anthropic'
      ? { name: 'auth', ok: Boolean(keySource), required: true, detail: keySource ? `API key from ${keySource}` : 'no API key: set ANTHROPIC_API_KEY or run keel login' }
      : { name: 'auth', ok: true, detail: `provider ${provider}: its own key settings apply` },
  );
  if (kernel.config.baseURL) checks.push({ name: 'endpoint', ok: true, detail: `requests go to ${kernel.config.baseURL}` });

  const files = Object.values(kernel.config.sources).filter((s, i, all) => s !== 'env' && s !== 'flags' && s !== authFile && !s.includes(', alias ') && all.indexOf(s) === i);
  checks.push({ name: 'config', ok: true, detail: files.length ? `loaded ${files.join(', ')}` : 'no config files: defaults, environment and flags only' });
  checks.push(
    kernel.config.trusted !== false
      ? { name: 'trust', ok: true, detail: `${kernel.config.projectRoot} is trusted` }
      : kernel.config.untrustedFiles?.length
        ? { name: 'trust', ok: false, detail: `${kernel.config.projectRoot} is not trusted, so ${kernel.config.untrustedFiles.join(', ')} ${kernel.config.untrustedFiles.length === 1 ? 'is' : 'are'} skipped; run keel trust to trust it` }
        : { name: 'trust', ok: true, detail: `${kernel.config.projectRoot} is not trusted; it has no project settings to skip` },
  );

  const rg = onPath('rg', env);
  checks.push({ name: 'ripgrep', ok: Boolean(rg), detail: rg ? `grep uses ${rg}` : 'rg is not installed: grep falls back to a slower JavaScript search (Debian/Ubuntu: apt-get install ripgrep)' });

  const sandbox = (kernel.config.sandbox ?? {}) as { enabled?: boolean };
  const bwrap = onPath('bwrap', env);
  let sandboxDetail = bwrap ? `bubblewrap at ${bwrap}` : 'bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)';
  let sandboxOk = Boolean(bwrap);
  if (bwrap) {
    const probe = spawnSync(bwrap, ['--die-with-parent', '--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], { encoding: 'utf8', timeout: 10_000 });
    if (probe.status !== 0) {
      sandboxOk = false;
      sandboxDetail = `bubblewrap cannot create a sandbox here: ${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0]}`;
    }
  }
  checks.push({ name: 'sandbox', ok: sandboxOk, required: Boolean(sandbox.enabled), detail: `${sandboxDetail}${sandbox.enabled ? '' : ' (sandbox.enabled is false)'}` });

  try {
    const trust = JSON.parse(readFileSync(path.join(kernel.config.keelHome, 'trusted-folders.json'), 'utf8')) as { folders?: unknown };
    if (!Array.isArray(trust.folders)) checks.push({ name: 'trusted folders', ok: false, detail: `${path.join(kernel.config.keelHome, 'trusted-folders.json')}: no "folders" list` });
  } catch {
    // no trust file yet, or one the CLI already reported
  }

  for (const name of kernel.services.names().filter((n) => n.startsWith('doctor:')).sort()) {
    const service = kernel.services.get(name) as Partial<DoctorService> | undefined;
    if (typeof service?.checks !== 'function') continue;
    try {
      checks.push(...(await service.checks()));
    } catch (err) {
      checks.push({ name: name.slice('doctor:'.length), ok: false, detail: `its check failed: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return checks;
}

/**
 * Whether this process started from the build's start-up snapshot (bin/keel.js starts `node --snapshot-blob` when
 * run as an executable). Without it Keel works the same and starts more slowly.
 */
function startUpCheck(): DoctorCheck {
  const flag = process.execArgv.findIndex((a) => a === '--snapshot-blob' || a.startsWith('--snapshot-blob='));
  if (flag >= 0) {
    const blob = process.execArgv[flag].includes('=') ? process.execArgv[flag].split('=')[1] : process.execArgv[flag + 1];
    return { name: 'start-up', ok: true, detail: `from the start-up snapshot ${blob}` };
  }
  return { name: 'start-up', ok: false, detail: `without the start-up snapshot, so start-up is slower: ${whyNoSnapshot()}` };
}

/** Why the launcher did not use the snapshot, checked the way bin/keel.js checks (it runs as argv[1]). */
function whyNoSnapshot(): string {
  if (process.env.KEEL_NO_SNAPSHOT) return 'KEEL_NO_SNAPSHOT is set';
  if (process.env.NODE_OPTIONS) return 'NODE_OPTIONS is set (Node starts from a snapshot only with the flags that made it)';
  const launcher = process.argv[1] ? path.resolve(process.argv[1]) : undefined;
  const blob = launcher ? path.join(path.dirname(launcher), '..', 'dist', 'bin', 'keel.blob') : undefined;
  const rebuild = 'run `npm run build` in the Keel package (or reinstall it) to make one for this Node';
  if (!blob || !existsSync(blob)) return `there is no dist/bin/keel.blob: ${rebuild}`;
  try {
    const maker = readFileSync(`${blob}.node`, 'utf8').trim();
    const node = realpathSync(process.execPath);
    if (maker !== node) return `the snapshot was made by ${maker}, and this is ${node}: ${rebuild}`;
    if (statSync(node).mtimeMs > statSync(blob).mtimeMs) return `${node} is newer than the snapshot (upgraded since): ${rebuild}`;
  } catch {
    return `dist/bin/keel.blob.node is missing or unreadable: ${rebuild}`;
  }
  return 'run as `keel` (an executable), not `node bin/keel.js`';
}

export function formatDoctor(checks: DoctorCheck[]): string {
  const lines = checks.map((c) => `${c.ok ? 'ok  ' : c.required ? 'FAIL' : 'warn'}  ${c.name.padEnd(16)} ${c.detail}`);
  const failed = checks.filter((c) => !c.ok && c.required).length;
  const warned = checks.filter((c) => !c.ok && !c.required).length;
  lines.push('', failed ? `${failed} problem(s) to fix, ${warned} warning(s).` : warned ? `Ready, with ${warned} warning(s).` : 'Ready.');
  return lines.join('\n');
}
