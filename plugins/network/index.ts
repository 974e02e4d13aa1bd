/**
 * The network every outbound connection goes through: proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), client
 * certificates for mutual TLS, and (as Node does it) `NODE_EXTRA_CA_CERTS`. Offered as the `network` service, which the
 * providers, `web_fetch`, `web_search` and the MCP bridge consult when it is present. Nothing of it loads unless a proxy
 * variable or a client certificate is set: `configured` is read from the environment and the config, and the
 * connection code (cold.ts) is imported on the first connection that needs it.
 */
import { z } from 'zod';
import { definePlugin } from '../../kernel/index.js';
import type { ConnectOptions, Network } from './cold.js';
import { settingsOf, type NetworkSettings } from './settings.js';

export type { ConnectOptions, Network, NetworkSettings };

export interface NetworkService {
  /** True when a proxy variable or a client certificate is set; otherwise every plugin keeps its own direct path. */
  readonly configured: boolean;
  /** The connection code, loaded on first use; `undefined` when nothing is configured. */
  load(): Promise<Network | undefined>;
  /**
   * A fetch over node:http: through the proxy (and presenting the client certificate when `opts.identity`) when one is
   * configured, directly otherwise; `opts.unref` for responses that may stay open (an MCP server's event stream).
   */
  fetch(input: string | URL | Request, init?: RequestInit, opts?: ConnectOptions): Promise<Response>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Proxies and client certificates for every outbound connection (plugin `network`). */
    network: NetworkService;
  }
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Client certificate for mutual TLS (plugin `network`); the CLAUDE_CODE_CLIENT_* variables take precedence. */
    network?: NetworkSettings;
  }
}

const networkConfig = z
  .object({
    /** PEM file of the client certificate (chain) presented to the model API and MCP servers. */
    clientCert: z.string().min(1),
    /** PEM file of its private key. */
    clientKey: z.string().min(1),
    /** Passphrase of an encrypted private key. */
    clientKeyPassphrase: z.string(),
    /** How long a proxy may take to answer CONNECT before the attempt fails naming it (default 20 s). */
    proxyTimeoutMs: z.number().int().positive(),
  })
  .partial()
  .strict();

const NAME = 'network';

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { network: networkConfig },
  apply(kernel) {
    const settings = () => settingsOf(process.env, kernel.config.network, kernel.config.cwd);
    let loading: Promise<Network> | undefined;
    const load = async (): Promise<Network> => {
      const { createNetwork } = await import('./cold.js');
      return createNetwork(settings());
    };
    const service: NetworkService = {
      get configured() {
        return settings().configured;
      },
      load() {
        if (!settings().configured) return Promise.resolve(undefined);
        loading ??= load();
        return loading;
      },
      async fetch(input, init, opts) {
        const network = await service.load();
        if (network) return network.fetch(input, init, opts);
        const { directFetch } = await import('./cold.js');
        return directFetch(input, init, opts);
      },
    };
    kernel.services.provide('network', service);
    kernel.services.provide(`doctor:${NAME}`, {
      async checks() {
        const { doctorChecks } = await import('./cold.js');
        return doctorChecks(settings(), kernel.config.provider === 'openai' ? (kernel.config.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1') : (kernel.config.baseURL ?? process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com'));
      },
    });
  },
}));
