/** A small project tree with ignore rules, hidden files, binary and odd encodings: shared by glob and grep tests. */
import { utimesSync, writeFileSync } from 'node:fs';
import type { Workspace } from '../../helpers/workspace.js';

export function buildTree(ws: Workspace): void {
  ws.write('.gitignore', 'node_modules/\n*.log\nbuild/\n!build/keep.ts\ngenerated/\n');
  ws.write('src/index.ts', 'import { helper } from "./util";\nexport function main() {\n  return helper(1);\n}\n// NOTE: more\n');
  ws.write('src/util.ts', 'export function helper(n: number) {\n  // note lower\n  return n + 1;\n}\n');
  ws.write('src/deep/nested/thing.tsx', 'export const Thing = () => <div>helper</div>;\n');
  ws.write('src/.gitignore', 'secret.ts\n');
  ws.write('src/secret.ts', 'export const helper = "hidden by nested gitignore";\n');
  ws.write('src/win.ts', 'export function crlf() {\r\n  return "helper";\r\n}\r\n');
  ws.write('lib/a.js', 'function helper() {}\nmodule.exports = helper;\n');
  ws.write('lib/b.js', 'const x = 1;\nconst y = 2;\nconst z = x + y;\nconsole.log(helper);\nconst w = 3;\nconst v = 4;\nconst u = 5;\nhelper(u);\n');
  ws.write('.github/workflow.yml', 'name: helper ci\n');
  ws.write('node_modules/pkg/index.js', 'module.exports = function helper() {};\n');
  ws.write('debug.log', 'helper log line\n');
  ws.write('build/out.js', 'helper();\n');
  ws.write('README.md', '# Demo\n\nCall `helper()` from src.\nHELPER in capitals.\n');
  ws.write('.git/HEAD', 'ref: refs/heads/helper\n');
  writeFileSync(ws.path('image.bin'), Buffer.from([0x68, 0x65, 0x6c, 0x70, 0x65, 0x72, 0x00, 0x01, 0x02]));
  ws.write('multi.txt', 'start\nfoo\nbar\nend\nfoo\nbaz\n');
  // Distinct mtimes make "newest first" checkable.
  const base = new Date('2024-01-01T00:00:00Z').getTime() / 1000;
  const order = ['lib/a.js', 'lib/b.js', 'src/util.ts', 'src/index.ts', 'README.md'];
  order.forEach((rel, i) => utimesSync(ws.path(rel), base + i * 60, base + i * 60));
}
