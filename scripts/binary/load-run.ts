// The binary's plugins/ui-ink/load-run.ts: the Ink UI is its own ES module bundle, dist/bin/ui/ink.js.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleFile } from './bundle-url.js';
import { hostImport } from './host.js';

export const loadRun = (): Promise<typeof import('../../plugins/ui-ink/run.js')> =>
  hostImport(pathToFileURL(path.join(path.dirname(bundleFile()), 'ui', 'ink.js')).href) as unknown as Promise<typeof import('../../plugins/ui-ink/run.js')>;
