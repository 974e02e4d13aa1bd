// Run by scripts/build.mjs in a fresh process: evaluates one vendor bundle (every specifier it exposes) and writes
// its V8 code cache beside it as `<name>.cache`, in scripts/vendor-loader.ts's format (magic, the bundle's SHA-256,
// the payload's SHA-256, the payload). Usage: node make-code-cache.cjs <bundle.cjs> '<specifiers as JSON>'
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const [file, specs] = process.argv.slice(2);
const bytes = fs.readFileSync(file);
// The same wrapper as the loader's: a cache is for one exact source text.
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`, { filename: file });
const module_ = { exports: {} };
script.runInThisContext()(module_.exports, createRequire(file), module_, file, path.dirname(file));
for (const spec of JSON.parse(specs)) void module_.exports[spec];
const payload = script.createCachedData();
const sha = (b) => createHash('sha256').update(b).digest();
fs.writeFileSync(file.replace(/\.cjs$/, '.cache'), Buffer.concat([Buffer.from('KEELCC1\n', 'latin1'), sha(bytes), sha(payload), payload]), { mode: 0o644 });
