import { describe, expect, it } from 'vitest';
import { testKernel } from '../../helpers/kernel.js';
import userHooks from '../../../plugins/user-hooks/index.js';
import { hooksListing } from '../../../plugins/user-hooks/list.js';

describe('/hooks', () => {
  it('lists each event, matcher and command with the file that set them', () => {
    const text = hooksListing(
      { PreToolUse: [{ matcher: 'Bash|Edit', hooks: [{ type: 'command', command: 'lint.sh', timeout: 5 }] }], Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }] },
      '/p/.claude/settings.json',
    );
    expect(text.split('\n').slice(0, 5)).toEqual(['User hooks (from /p/.claude/settings.json):', '  PreToolUse', '    Bash|Edit: lint.sh (timeout 5s)', '  Stop', '    (every one): notify']);
  });

  it('says when none are in force, and names the untrusted files that were not loaded', () => {
    const text = hooksListing(undefined, undefined, ['/p/.claude/settings.json']);
    expect(text).toContain('No user hooks are in force.');
    expect(text).toContain('Not loaded (the project is not trusted): /p/.claude/settings.json');
  });

  it('is registered even when no hooks are configured', async () => {
    const kernel = testKernel([userHooks()]);
    expect(kernel.commands.get('hooks')?.description).toMatch(/user hooks in force/);
  });
});
