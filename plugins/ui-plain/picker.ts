/** The resume picker as lines: a numbered list of this project's sessions, filtered by what is typed. */

export interface SessionSummary {
  id: string;
  lastActivity: Date;
  firstPrompt?: string;
  turns: number;
  costUsd: number;
}

export async function pickSession(sessions: SessionSummary[], say: (text: string) => void, ask: (prompt: string) => Promise<string | null>): Promise<string | null> {
  let query = '';
  for (;;) {
    const shown = sessions.filter((s) => s.id.includes(query) || (s.firstPrompt ?? '').toLowerCase().includes(query.toLowerCase())).slice(0, 20);
    say(query ? `Sessions matching "${query}":` : 'Sessions of this project, newest first:');
    if (shown.length === 0) say('  (none)');
    shown.forEach((s, i) => say(`  ${i + 1}) ${s.lastActivity.toISOString().slice(0, 16).replace('T', ' ')} ${s.id.slice(0, 8)} ${s.turns} ${s.turns === 1 ? 'turn' : 'turns'} $${s.costUsd.toFixed(2)} ${(s.firstPrompt ?? '(no prompt)').replace(/\s+/g, ' ').slice(0, 60)}`));
    const reply = await ask('Number to resume, text to search, Enter for a new session: ');
    if (reply === null || reply.trim() === '') return null;
    const n = Number(reply.trim());
    if (Number.isInteger(n) && n >= 1 && n <= shown.length) return shown[n - 1].id;
    query = reply.trim();
  }
}
