// npm's `prepare`: builds Keel (scripts/build.mjs) — except when npm runs it only because it links this
// already-built folder somewhere else. `npx keel` in a clone (npm exec) finds `keel` in the folder's own
// package.json `bin`, so it links the folder into its npx cache (~/.npm/_npx/<hash>/node_modules/keel) and npm
// runs a linked folder's `prepare` again: the whole build a second time, 20–40 s, for a first `npx keel` right
// after `npm install` had built it. `npm link` and `npm install -g .` link the folder the same way. The link
// points at this folder, so the build its `npm install` (or `npm run build`) made is the one they run.
// `npm install`, `npm ci`, `npm pack` and `npm publish` always build.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What `bin/keel.js` and `import 'keel'` run; the build writes dist/bin last (staged, then swapped in). */
const BUILT = ['dist/bin/keel.cjs', 'dist/bin/load.cjs', 'dist/kernel/index.js', 'dist/fast-path/version'];

const linking = process.env.npm_command === 'exec' || process.env.npm_command === 'link' || process.env.npm_config_global === 'true';
const built = BUILT.every((file) => existsSync(path.join(root, file)));

if (linking && built) {
  process.stdout.write(`prepare: ${process.env.npm_command === 'exec' ? 'npm exec' : 'npm'} links this folder; its build is there, not rebuilding (npm run build rebuilds)\n`);
} else {
  await import('./build.mjs');
}
