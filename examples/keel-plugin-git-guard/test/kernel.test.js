// The plugin inside a real kernel, with a scripted model (keel/testing): what the model is told when it pushes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { testAgent } from 'keel/testing';
import gitGuard from '../index.js';

const bash = (command) => ({ tools: [{ name: 'bash', input: { command } }] });

test('a push to main is refused before the permission policy, and the model is told why', async () => {
  const agent = await testAgent({
    plugins: [gitGuard({ branches: ['main'] })],
    permissionMode: 'auto',
    script: [bash('git push origin main'), bash('git status --short'), 'I will open a pull request instead.'],
  });
  try {
    const git = (...args) => execFileSync('git', args, { cwd: agent.dir, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    const result = await agent.run('ship it');
    assert.equal(result.isError, false);
    const [push, status] = agent.toolResults();
    assert.equal(push.isError, true);
    assert.match(String(push.content), /git-guard: pushing to the protected branch main/);
    assert.equal(status.isError, false);
    assert.equal(agent.model.requests.length, 3);
  } finally {
    await agent.close();
  }
});
