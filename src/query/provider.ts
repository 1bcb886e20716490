import { MeshError } from '../tool/errors.ts';

/**
 * The query-provider seam: web search and page-to-markdown reading through a hosted API the
 * operator registered (a `tool_providers` row). Above this file nothing names a vendor: the tools
 * are `web_search` and `web_read`, the vendor is the row's kind. Adapters live in
 * src/query/adapters, one per kind; each sends requests only to the base URL it was given.
 */

export const QUERY_PROVIDER_KINDS = ['exa', 'brave', 'tavily', 'cloudflare'] as const;
export type QueryProviderKind = (typeof QUERY_PROVIDER_KINDS)[number];

export const RECENCIES = ['day', 'week', 'month', 'year'] as const;
export type Recency = (typeof RECENCIES)[number];

/** A search filter a provider may or may not support; unsupported ones are refused by name. */
export type SearchFilter = 'recency' | 'include_domains' | 'exclude_domains';

export interface SearchRequest {
  readonly query: string;
  /** How many results are wanted (1..the provider's maxCount; the caller clamps). */
  readonly count: number;
  /** Only results published within this period. */
  readonly recency?: Recency;
  /** Only results from these hosts (bare host names, e.g. `nodejs.org`). */
  readonly includeDomains?: readonly string[];
  /** No results from these hosts. */
  readonly excludeDomains?: readonly string[];
  readonly signal: AbortSignal;
}

/** One result, the same shape whatever the provider. */
export interface SearchResult {
  readonly title: string;
  readonly url: string;
  /** A short excerpt of the page (plain text, may be empty). */
  readonly snippet: string;
  /** When the page was published, as an ISO 8601 date or date-time, when the provider knows. */
  readonly publishedAt?: string;
}

export interface ReadRequest {
  /** An absolute http(s) URL, already checked by the caller (no credentials, no private host). */
  readonly url: string;
  readonly signal: AbortSignal;
}

export interface ReadResult {
  /** The URL the provider read (it may have followed a redirect). */
  readonly url: string;
  readonly title?: string;
  /** The page as markdown (or plain text where the provider only gives text). */
  readonly markdown: string;
}

/** What an adapter can do; the tools are offered from this, and filters checked against it. */
export interface QueryProviderCapabilities {
  /** Absent when the provider cannot search (reading only). */
  readonly search?: {
    readonly maxCount: number;
    readonly filters: ReadonlySet<SearchFilter>;
  };
  readonly read: boolean;
}

/** What a provider row gives its adapter. */
export interface QueryProviderConfig {
  /** The API root, e.g. `https://api.exa.ai` (https, or loopback http behind the dev setting). */
  readonly baseUrl: string;
  /** The provider's credential, decrypted for this call only. */
  readonly apiKey: string;
  /** Kind-specific settings (Cloudflare's `accountId`). */
  readonly settings: Readonly<Record<string, string>>;
  /** How long one request may take. */
  readonly timeoutMs: number;
}

/** One provider kind's client. Each method is one attempt: retries are the caller's. */
export interface QueryProviderAdapter {
  readonly kind: QueryProviderKind;
  readonly capabilities: QueryProviderCapabilities;
  search(request: SearchRequest): Promise<readonly SearchResult[]>;
  read(request: ReadRequest): Promise<ReadResult>;
}

export type QueryProviderFailure =
  /** The provider refused the credential (401/403). Never retried; never echoes the key. */
  | 'bad_credential'
  /** The provider's rate limit or quota (429, or its documented quota error). Retriable. */
  | 'rate_limited'
  /** Unreachable, timed out, 5xx, or an answer that is not the documented shape. Retriable. */
  | 'provider_down'
  /** The provider refused the request itself (4xx other than the above). Not retried. */
  | 'bad_request'
  /** The provider could not read that page (not found, blocked, empty). Not retried. */
  | 'unreadable'
  /** The request asks for something this kind cannot do (a filter, search on a reader). */
  | 'unsupported';

/** Why a provider call failed, as the caller decides retries and the model reads it. */
export class QueryProviderError extends MeshError {
  static readonly code = 'query_provider';
  constructor(
    readonly reason: QueryProviderFailure,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(
      QueryProviderError.code,
      message,
      options?.status === undefined ? { reason } : { reason, status: options.status },
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }

  get retriable(): boolean {
    return this.reason === 'rate_limited' || this.reason === 'provider_down';
  }
}
