import { systemClock, type Clock } from '../../tool/clock.ts';
import { createGuardedFetch } from '../../egress/guarded-fetch.ts';
import type {
  HttpFetch,
  QueryProviderAdapter,
  QueryProviderCapabilities,
  QueryProviderConfig,
  QueryProviderKind,
} from '../provider.ts';
import { BRAVE_CAPABILITIES, braveAdapter } from './brave.ts';
import { CLOUDFLARE_CAPABILITIES, cloudflareAdapter } from './cloudflare.ts';
import { EXA_CAPABILITIES, exaAdapter } from './exa.ts';
import { TAVILY_CAPABILITIES, tavilyAdapter } from './tavily.ts';

/** Each vendor's public API root: what a provider row's base URL is when the operator gives none. */
export const DEFAULT_BASE_URLS: Readonly<Record<QueryProviderKind, string>> = Object.freeze({
  exa: 'https://api.exa.ai',
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
  cloudflare: 'https://api.cloudflare.com',
});

/** What an adapter of `kind` can do, known without a config (to describe a row, offer tools). */
export function capabilitiesOf(kind: QueryProviderKind): QueryProviderCapabilities {
  switch (kind) {
    case 'exa':
      return EXA_CAPABILITIES;
    case 'brave':
      return BRAVE_CAPABILITIES;
    case 'tavily':
      return TAVILY_CAPABILITIES;
    case 'cloudflare':
      return CLOUDFLARE_CAPABILITIES;
    default: {
      const unknown: never = kind;
      throw new Error(`unknown query provider kind ${String(unknown)}`);
    }
  }
}

/** What an adapter takes besides its row's config. */
export interface QueryProviderAdapterOptions {
  /** Recency windows and Retry-After dates are measured from this (the system clock). */
  readonly clock?: Clock;
  /**
   * What requests are sent with: the guarded fetch by default, loopback allowed only when the
   * config's development setting is.
   */
  readonly fetch?: HttpFetch;
}

/**
 * The adapter for one provider row. It sends requests only to `config.baseUrl` (its path prefix
 * kept) and reads nothing from the environment. A config it cannot use (an empty key, a base URL
 * that is not http(s), Cloudflare without `accountId`) throws a QueryProviderError here, before
 * any request.
 */
export function createQueryProviderAdapter(
  kind: QueryProviderKind,
  config: QueryProviderConfig,
  options: QueryProviderAdapterOptions = {},
): QueryProviderAdapter {
  const clock = options.clock ?? systemClock;
  const fetch =
    options.fetch ?? createGuardedFetch({ allowLoopbackHttp: config.allowLoopbackHttp === true });
  switch (kind) {
    case 'exa':
      return exaAdapter(config, clock, fetch);
    case 'brave':
      return braveAdapter(config, clock, fetch);
    case 'tavily':
      return tavilyAdapter(config, clock, fetch);
    case 'cloudflare':
      return cloudflareAdapter(config, clock, fetch);
    default: {
      const unknown: never = kind;
      throw new Error(`unknown query provider kind ${String(unknown)}`);
    }
  }
}
