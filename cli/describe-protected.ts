/** `keel describe`'s table of the protected paths (kernel.protected). */
import type { ProtectedEntry } from '../kernel/protected.js';

/** The entries as a table for `keel describe` and the README: what, which access, who added it, why. */
export function describeProtected(entries: readonly ProtectedEntry[]): string {
  const rows = entries.map((entry) => {
    const what = entry.path ?? `${String(entry.segment)} (any folder)`;
    const access = `${entry.read ? 'read+write' : 'write'}${entry.frontMatter ? ' (front matter)' : ''}`;
    const except = entry.except?.length ? ` (except ${entry.except.map((e) => `${e.path} for ${e.access === 'both' ? 'read+write' : e.access}`).join(', ')})` : '';
    return [what, access, entry.owner ?? 'kernel', `${entry.why}${except}`];
  });
  const width = (i: number) => Math.max(...rows.map((r) => r[i].length));
  const pad = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(width(i)) : c)).join('  ');
  const head = 'Protected paths (any tool asks before writing them, in every mode; read+write ones before reading them too):';
  return [head, ...rows.map((r) => `  ${pad(r)}`)].join('\n');
}
