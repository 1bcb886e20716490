import { serviceKey, type ToolContext } from '../../src/tool/context.ts';
import { MeshError } from '../../src/tool/errors.ts';

/**
 * What the web verbs see of the query providers the operator registered and granted: search and
 * read, through whichever provider serves this agent. The handlers never learn a vendor's API,
 * its base URL or its key; the provider's name comes back only to be shown in the run.
 */

export interface WebSearchQuery {
  readonly query: string;
  readonly count: number;
  readonly recency?: 'day' | 'week' | 'month' | 'year';
  readonly includeDomains?: readonly string[];
  readonly excludeDomains?: readonly string[];
}

export interface WebSearchHit {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  readonly publishedAt?: string;
}

/** What a provider call came to, with the meter it moved. */
export interface Served<T> {
  /** The provider's name (the operator's row), for the run's record. */
  readonly provider: string;
  /** Requests made to it for this call, retries included. */
  readonly calls: number;
  readonly value: T;
}

export interface WebPage {
  readonly url: string;
  readonly title?: string;
  readonly markdown: string;
}

export interface WebSearch {
  search(ctx: ToolContext, query: WebSearchQuery): Promise<Served<readonly WebSearchHit[]>>;
}

export interface WebRead {
  /** Reads `url` (as the model gave it: the service checks it before any provider sees it). */
  read(ctx: ToolContext, url: string): Promise<Served<WebPage>>;
}

/** `service:mesh.web_search`: offered only to an agent granted a provider that can search. */
export const WEB_SEARCH = serviceKey<WebSearch>('mesh.web_search');
/** `service:mesh.web_read`: offered only to an agent granted a provider that can read pages. */
export const WEB_READ = serviceKey<WebRead>('mesh.web_read');

export type WebFailure =
  | 'no_provider'
  /** web_read's URL is not a public http(s) URL; refused before any provider is called. */
  | 'unsafe_url'
  | 'quota_exhausted'
  | 'provider_down'
  | 'rate_limited'
  | 'bad_credential'
  | 'bad_request'
  | 'unreadable'
  | 'unsupported';

/**
 * Why a web call got no answer. The message names the fix and never the key, the query or the
 * URL; `calls` is what the attempt cost, `exhausted` says the provider's ceiling is now spent.
 */
export class WebProviderError extends MeshError {
  static readonly code = 'web_provider';
  constructor(
    readonly reason: WebFailure,
    message: string,
    readonly detail: { provider?: string; calls: number; exhausted?: boolean },
  ) {
    super(WebProviderError.code, message, {
      reason,
      ...(detail.provider === undefined ? {} : { provider: detail.provider }),
      calls: detail.calls,
    });
  }
}
