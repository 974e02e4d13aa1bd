/**
 * The system-prompt section that lists the skills (progressive disclosure: names and descriptions only; the
 * body comes with the `skill` tool). It fits in a byte budget whatever the number of skills: descriptions are
 * shortened evenly (the short ones keep their length and leave their share to the long ones).
 */
import type { Skill } from './catalog.js';

/** Bytes the section may take: with the `skill` tool's schema, 100 skills stay under 6 KB of request. */
export const SECTION_BUDGET = 5_400;
/** A description longer than this is shortened even when there is room: the body says the rest. */
const MAX_DESCRIPTION = 250;

export const SECTION_HEADER =
  '# Skills\nSkills hold instructions for particular tasks. When a task matches one of these, call the `skill` tool with its name first.\n';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function shorten(text: string, limit: number): string {
  if (bytes(text) <= limit) return text;
  if (limit < 2) return '';
  let out = '';
  for (const ch of text) {
    if (bytes(out + ch) > limit - bytes('…')) break;
    out += ch;
  }
  return `${out.trimEnd()}…`;
}

/** The largest cap c such that the descriptions, each cut to c bytes, fit in `room` together. */
function waterLevel(lengths: number[], room: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let left = room;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i]! > share) return share;
    left -= sorted[i]!;
  }
  return Number.MAX_SAFE_INTEGER;
}

export function skillsSection(skills: readonly Skill[], budget = SECTION_BUDGET): string | undefined {
  if (skills.length === 0) return undefined;
  const names = skills.map((s) => `- ${s.name}: `);
  const fixed = bytes(SECTION_HEADER) + names.reduce((sum, n) => sum + bytes(n) + 1, 0);
  const descriptions = skills.map((s) => shorten(s.description, MAX_DESCRIPTION));
  const cap = waterLevel(descriptions.map(bytes), Math.max(0, budget - fixed));
  const lines: string[] = [];
  let used = bytes(SECTION_HEADER);
  for (let i = 0; i < skills.length; i++) {
    const line = `${names[i]}${shorten(descriptions[i]!, cap)}`.trimEnd();
    // Even names alone may not fit (thousands of skills): the rest are still usable by name through `skill`.
    if (used + bytes(line) + 1 > budget - 100) {
      lines.push(`(${skills.length - i} more skills: the skill tool called with an unknown name lists every name)`);
      break;
    }
    lines.push(line);
    used += bytes(line) + 1;
  }
  return SECTION_HEADER + lines.join('\n');
}
