import { afterEach, describe, expect, it } from 'vitest';
import { assemble } from '../../cli/main.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

// The order of taps is behaviour (which permission check decides first, which context section comes
// first): this snapshot keeps every change to it visible in review.
describe('the default preset', () => {
  it('describes its hooks and taps in call order', async () => {
    ws = makeWorkspace({ git: true });
    const kernel = await assemble({ outputFormat: 'text', inputFormat: 'text' }, { KEEL_HOME: ws.home }, undefined, ws.dir);
    expect(kernel.describe()).toMatchSnapshot();
  });

  it('lists its plugins in preset order', async () => {
    ws = makeWorkspace({ git: true });
    const kernel = await assemble({ outputFormat: 'text', inputFormat: 'text' }, { KEEL_HOME: ws.home }, undefined, ws.dir);
    expect(kernel.plugins.map((p) => p.name)).toMatchSnapshot();
  });
});
