// The binary's cli/native-import.ts: `import()` through the host's loader (see host.ts).
import { hostImport } from './host.js';

export const nativeImport = (specifier: string): Promise<Record<string, unknown>> => hostImport(specifier);
