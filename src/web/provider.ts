import { hasCode, MeshError } from '../tool/errors.ts';

/**
 * The query-provider seam: web search and page-to-markdown reading through a hosted API the
 * operator registered (a `tool_providers` row). Above this file nothing names a vendor: the tools
 * are `web_search` and `web_read`, the vendor is the row's kind. Adapters live in
 * src/web/adapters, one per kind; each sends requests only to the base URL it was given.
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
  /** Development only: the base URL may be a loopback address (and plain http). */
  readonly allowLoopbackHttp?: boolean;
}

/**
 * How an adapter sends its requests: the control plane's guarded fetch (address checked on every
 * hop, DNS pinned, redirects bounded), never the global one.
 */
export type HttpFetch = (url: string, init: RequestInit) => Promise<Response>;

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
  /** The provider's rate limit or quota (429, or its documented quota error). Retryable. */
  | 'rate_limited'
  /** Unreachable, timed out, 5xx, or an answer that is not the documented shape. Retryable. */
  | 'provider_down'
  /** The provider refused the request itself (4xx other than the above). Not retried. */
  | 'bad_request'
  /** The provider could not read that page (not found, blocked, empty). Not retried. */
  | 'unreadable'
  /** The request asks for something this kind cannot do (a filter, search on a reader). */
  | 'unsupported';

/** What a {@link QueryProviderError} carries besides its reason and message. */
export interface QueryProviderErrorOptions {
  readonly cause?: unknown;
  /** The provider's HTTP status, when it answered one. */
  readonly status?: number;
  /** How long the provider asked to be left alone (its Retry-After), in milliseconds. */
  readonly retryAfterMs?: number;
  /** How many attempts were made before this error was final (set by `withRetries`). */
  readonly attempts?: number;
}

/** Why a provider call failed, as the caller decides retries and the model reads it. */
export class QueryProviderError extends MeshError {
  static readonly code = 'query_provider';
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number | undefined;

  constructor(
    readonly reason: QueryProviderFailure,
    message: string,
    options?: QueryProviderErrorOptions,
  ) {
    super(
      QueryProviderError.code,
      message,
      {
        reason,
        ...(options?.status === undefined ? {} : { status: options.status }),
        ...(options?.attempts === undefined ? {} : { attempts: options.attempts }),
      },
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = options?.status;
    this.retryAfterMs = options?.retryAfterMs;
    this.attempts = options?.attempts;
  }

  get retryable(): boolean {
    return this.reason === 'rate_limited' || this.reason === 'provider_down';
  }

  /** The same failure, saying how many attempts it took (errors stay immutable). */
  withAttempts(attempts: number): QueryProviderError {
    return new QueryProviderError(this.reason, this.message, {
      ...(this.cause === undefined ? {} : { cause: this.cause }),
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
      attempts,
    });
  }
}

/** True when `error` is a {@link QueryProviderError}, from any copy of this module. */
export function isQueryProviderError(error: unknown): error is QueryProviderError {
  return hasCode(error, QueryProviderError.code) && 'reason' in error;
}
