import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowed, BRIEF, refusal } from '../policy.js';

test('only read-level tools are kept', () => {
  assert.equal(allowed({ permission: 'read' }), true);
  for (const permission of ['write', 'execute', 'network']) assert.equal(allowed({ permission }), false, permission);
  assert.equal(allowed(undefined), false);
});

test('every other call is refused, naming the tool and why', () => {
  assert.equal(refusal('read_file', { permission: 'read' }), undefined);
  assert.match(refusal('write_file', { permission: 'write' }), /keel-preset-reviewer: write_file is a tool that can change files, and a review only reads/);
  assert.match(refusal('bash', { permission: 'execute' }), /bash is a tool that can run commands/);
  assert.match(refusal('mcp__x__y', undefined), /mcp__x__y is not a known tool/);
});

test('the brief says the agent reviews and cannot change files', () => {
  assert.match(BRIEF, /reviewing code, not changing it/);
});
