/** The shell guard judges the folder a target stands for, not its spelling. */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { catastrophic } from '../../../plugins/permissions/guard.js';
import { analyzeShell } from '../../../plugins/permissions/shell.js';

const home = '/home/alice';
const ctx = { home, cwd: '/home/alice/work/project' };

async function verdict(command: string, at = ctx) {
  return catastrophic(command, await analyzeShell(command, { home: at.home }), at);
}

const BLOCKED = [
  'rm -rf "$HOME"/',
  'rm -rf "$HOME"',
  'rm -rf ${HOME}',
  'rm -rf "${HOME}/"',
  'rm -rf ~/..',
  'rm -rf ~/../',
  'rm -rf ~/.',
  'rm -rf ~//',
  'rm -rf ~/*',
  'rm -rf ~/.*',
  'rm -rf ~bob',
  'rm -rf ~root/',
  'rm -rf /usr/..',
  'rm -rf /usr/../',
  'rm -rf //',
  'rm -rf /./',
  'rm -rf /usr/',
  'rm -rf /etc/../usr',
  'rm -rf /home/bob',
  'rm -rf ../..',
  'rm -rf ../../..',
  'rm -r -f /',
  'rm --recursive --force /var',
  '/bin/rm -rf /',
  'sudo -u root rm -rf /',
  'nice -n 5 rm -rf /',
  'timeout -s KILL 5 rm -rf ~',
  'env -i rm -rf ~',
  'xargs rm -rf /',
  'find $HOME -delete',
  'find "$HOME" -delete',
  'find ~/ -name "*" -delete',
  'find / -exec rm -rf {} +',
  'find /usr/.. -execdir /bin/rm {} ;',
  'find ~ -exec sh -c "rm -rf {}" ;',
  'chmod -R 777 /usr/../',
  'chmod -R 000 ~',
  'chown -R nobody "$HOME"',
  'chgrp --recursive nobody /etc/',
  'mv ~ /tmp/gone',
  'mv / /tmp',
  'shred /dev/sda',
  'cd / && rm -rf ./*',
  'cd && rm -rf ./*',
];

describe('catastrophic spellings', () => {
  for (const command of BLOCKED) {
    it(`blocks ${JSON.stringify(command)}`, async () => {
      expect(await verdict(command)).toBeTypeOf('string');
    });
  }
});

describe('what the guard leaves alone', () => {
  for (const command of ['rm -rf build', 'rm -rf ./dist/', 'rm -rf ~/work/project/tmp', 'rm -rf "$HOME/work/project/out"', 'find . -name "*.o" -delete', 'chmod -R u+w src', 'rm -rf /tmp/keel-build', 'rm -f ~/notes.txt', 'mv build dist']) {
    it(`lets ${JSON.stringify(command)} through`, async () => {
      expect(await verdict(command)).toBeUndefined();
    });
  }
  it('judges "." by the working folder: the home folder is critical, a project is not', async () => {
    expect(await verdict('rm -rf .', { home, cwd: home })).toBeTypeOf('string');
    expect(await verdict('rm -rf .')).toBeUndefined();
  });
  it('uses the real home folder by default spelling', async () => {
    const real = { home: os.homedir(), cwd: '/tmp' };
    expect(await verdict('rm -rf "$HOME"/', real)).toBeTypeOf('string');
  });
});
