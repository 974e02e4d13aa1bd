/** Builds an in-process kernel for plugin tests, pointed at a scripted server. */
import { createKernel, defaultConfig, startSession, type Kernel, type Plugin, type ResolvedConfig, type Session } from '../../kernel/index.js';

export function testKernel(plugins: Plugin[], config: Partial<ResolvedConfig> = {}): Kernel {
  const kernel = createKernel({ config: defaultConfig({ apiKey: 'test-key', ...config }) });
  for (const plugin of plugins) kernel.use(plugin);
  return kernel.seal();
}

export async function testSession(kernel: Kernel, init: Partial<Session> = {}): Promise<Session> {
  return startSession(kernel, init);
}
