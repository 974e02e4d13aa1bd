import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judge } from '../judge.js';

const on = (branch) => () => branch;
const protectedBranches = ['main', 'master'];

test('pushes to a protected branch are refused, however they are spelled', () => {
  for (const command of [
    'git push origin main',
    'git push origin HEAD:main',
    'git push -f origin +feature:refs/heads/main',
    'git -C sub push origin master',
    'git push --all',
    'npm test && git push origin main',
    'echo $(git push origin main)',
    '/usr/bin/git push origin main',
    'git push "origin" "main"',
  ]) {
    assert.match(judge(command, protectedBranches, on('feature')) ?? '', /protected|push/, command);
  }
});

test('a push without a refspec follows the current branch', () => {
  assert.match(judge('git push', protectedBranches, on('main')) ?? '', /protected branch main/);
  assert.equal(judge('git push', protectedBranches, on('feature')), undefined);
  assert.match(judge('git push origin HEAD', protectedBranches, on('main')) ?? '', /protected branch main/);
});

test('commits are refused on a protected branch only', () => {
  assert.match(judge('git commit -m "x"', protectedBranches, on('main')) ?? '', /committing on the protected branch main/);
  assert.equal(judge('git commit -m "x"', protectedBranches, on('feature')), undefined);
  assert.match(judge('git add . && git commit -am wip', protectedBranches, on('master')) ?? '', /master/);
});

test('other commands, and pushes of other branches, pass', () => {
  for (const command of ['git status', 'git push origin feature', 'git log main', 'echo git push origin main is blocked', 'ls']) {
    assert.equal(judge(command, protectedBranches, on('main')), undefined, command);
  }
});

test('computed git words are refused', () => {
  assert.match(judge('git $SUB origin main', protectedBranches, on('feature')) ?? '', /computed/);
  assert.match(judge('git push origin $BRANCH', protectedBranches, on('feature')) ?? '', /computed/);
});
