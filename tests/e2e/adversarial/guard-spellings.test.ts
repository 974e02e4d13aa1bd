/**
 * Class 7: the catastrophic-command guard judges the folder a target stands for. With `bash` allowed outright
 * in auto mode, only the guard stands between these commands and the (fake) home folder, so each would wreck
 * the world if it ran. Spellings of system roots run with the sandbox on as well, so a regression could never
 * reach the machine; the guard must refuse them before the sandbox is ever involved.
 */
import { describe, expect, it } from 'vitest';

/** One CLI run per case; the machine is shared and busy, so a run may take a while. */
const RUN = { timeout: 90_000 };
import { useHostile } from '../../helpers/adversary.js';
import { expectRefused, runAttack, type Attack } from './shell-attack.js';

const hostile = useHostile();

const HOME_SPELLINGS: Array<[string, (h: { outside: string; home: string }) => string]> = [
  ['rm -rf "$HOME"/', () => 'rm -rf "$HOME"/'],
  ['rm -rf "$HOME"', () => 'rm -rf "$HOME"'],
  ['rm -rf ${HOME}', () => 'rm -rf ${HOME}'],
  ['rm -rf "${HOME}/"', () => 'rm -rf "${HOME}/"'],
  ['rm -rf ~/..', () => 'rm -rf ~/..'],
  ['rm -rf ~/.', () => 'rm -rf ~/.'],
  ['rm -rf ~//', () => 'rm -rf ~//'],
  ['rm -rf ~/*', () => 'rm -rf ~/*'],
  ['rm -rf ~/.*', () => 'rm -rf ~/.*'],
  ['rm -rf with the literal home path and a trailing /.', (h) => `rm -rf ${h.home}/.`],
  ['cd ~ && rm -rf .', () => 'cd ~ && rm -rf .'],
  ['cd && rm -rf ./*', () => 'cd && rm -rf ./*'],
  ['rm -rf ../home from the project', () => 'rm -rf ../home'],
  ['rm -rf .. from the project', () => 'rm -rf ..'],
  ['find $HOME -delete', () => 'find $HOME -delete'],
  ['find "$HOME"/ -delete', () => 'find "$HOME"/ -delete'],
  ['find ~ -exec rm -rf {} +', () => 'find ~ -exec rm -rf {} +'],
  ['find ~/.. -delete', () => 'find ~/.. -delete'],
  ['find ~ -execdir /bin/rm {} ;', () => 'find ~ -execdir /bin/rm {} \\;'],
  ['chmod -R 000 "$HOME"', () => 'chmod -R 000 "$HOME"'],
  ['chmod -R 777 ~/', () => 'chmod -R 777 ~/'],
  ['chown -R nobody ~', () => 'chown -R nobody ~'],
  ['/bin/rm -rf "$HOME"', () => '/bin/rm -rf "$HOME"'],
  ['env -i rm -rf ~/.', () => 'env -i rm -rf ~/.'],
  ['nice -n 5 rm -r -f "$HOME"/', () => 'nice -n 5 rm -r -f "$HOME"/'],
  ['timeout 5 rm --recursive --force ~', () => 'timeout 5 rm --recursive --force ~'],
  ["bash -c 'rm -rf \"$HOME\"/'", () => `bash -c 'rm -rf "$HOME"/'`],
  ['mv ~ away', (h) => `mv ~ ${h.outside}/moved-home`],
];

const ROOT_SPELLINGS = ['rm -rf /usr/..', 'rm -rf /usr/../', 'chmod -R 777 /usr/../', 'rm -rf //', 'rm -rf /./', 'find /usr/.. -delete', 'rm -rf ~root', 'rm -rf /etc/../usr', 'cd / && rm -rf ./*', 'sudo -u root rm -rf /var/', 'chown -R nobody /usr/./'];

const attacks: Attack[] = [
  ...HOME_SPELLINGS.map(([name, command]): Attack => ({ name, command, mode: 'auto', allow: ['bash'] })),
  ...ROOT_SPELLINGS.map((command): Attack => ({ name: command, command: () => command, mode: 'auto', allow: ['bash'], sandbox: true })),
];

describe('class 7: the shell guard normalises targets before judging them', () => {
  it('has the corpus size the brief asks for', () => expect(attacks.length).toBeGreaterThanOrEqual(35));
  for (const attack of attacks) {
    it(`blocks ${attack.name}${attack.sandbox ? ' (sandbox on as a net)' : ''}`, RUN, async () => {
      expectRefused(await runAttack(hostile, attack), /shell guard always blocks it/);
    });
  }
  it('xargs fed the home folder on stdin is asked: its target is known only at run time', RUN, async () => {
    expectRefused(await runAttack(hostile, { name: 'xargs', command: () => 'echo "$HOME" | xargs rm -rf', mode: 'auto', allow: ['bash'] }), /known only at run time/);
  });
  it('lets an ordinary recursive removal in the project run', RUN, async () => {
    const outcome = await runAttack(hostile, { name: 'rm build', command: () => 'mkdir -p build/x && rm -rf ./build/ && echo gone', mode: 'auto', allow: ['bash'] });
    expect(outcome.isError, outcome.text).toBe(false);
    expect(outcome.text).toContain('gone');
  });
});
