import { Exa, ExaError, type RegularSearchOptions } from 'exa-js';
import type { JsonValue } from '../../model/json.ts';
import type { Clock } from '../../tool/clock.ts';
import {
  QueryProviderError,
  type QueryProviderAdapter,
  type QueryProviderCapabilities,
  type QueryProviderConfig,
  type Recency,
  type SearchFilter,
  type HttpFetch,
} from '../provider.ts';
import { errorCodeOf, malformed, unreadablePage } from './failures.ts';
import { sendJson } from './http.ts';
import { httpUrl, isRecord, normalizeResults, SNIPPET_MAX_CHARS } from './normalize.ts';
import { checkedRoot, checkedSearch } from './preflight.ts';

/*
 * Exa through its official SDK, exa-js (pinned in package.json): `search` is `POST /search`,
 * `getContents` is `POST /contents`, the key goes in `x-api-key`. The SDK builds each request and
 * hands it to its one transport method, `request`, which ExaOverMesh overrides to send it with
 * sendJson: the SDK has no fetch option, and its own transport follows redirects to any host with
 * the key still attached, takes no AbortSignal, and keeps no response header (no Retry-After).
 */

/** The SDK's transport, replaced: the SDK's endpoint, method, body, query and extra headers. */
type ExaTransport = (
  endpoint: string,
  method: string,
  body: unknown,
  params: Readonly<Record<string, unknown>> | undefined,
  headers: Readonly<Record<string, string>> | undefined,
) => Promise<unknown>;

/** exa-js whose requests go through `transport`; one is made per call, for its signal. */
class ExaOverMesh extends Exa {
  readonly #transport: ExaTransport;

  constructor(apiKey: string, root: string, transport: ExaTransport) {
    super(apiKey, root);
    this.#transport = transport;
  }

  override async request<T = unknown>(
    endpoint: string,
    method: string,
    body?: unknown,
    params?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<T> {
    return (await this.#transport(endpoint, method, body, params, headers)) as T;
  }
}

/** Exa's documented maximum `numResults`. */
const MAX_COUNT = 100;

export const EXA_CAPABILITIES: QueryProviderCapabilities = Object.freeze({
  search: Object.freeze({
    maxCount: MAX_COUNT,
    filters: new Set<SearchFilter>(['recency', 'include_domains', 'exclude_domains']),
  }),
  read: true,
});

/** How far back each recency reaches; Brave's `pm` is 31 days too. */
const RECENCY_DAYS: Readonly<Record<Recency, number>> = { day: 1, week: 7, month: 31, year: 365 };
const DAY_MS = 86_400_000;

export function exaAdapter(
  config: QueryProviderConfig,
  clock: Clock,
  fetch: HttpFetch,
): QueryProviderAdapter {
  // checkedRoot refuses an empty key: given one, the SDK would read EXA_API_KEY instead.
  const root = checkedRoot('exa', config);

  /** Runs one SDK call, its request sent under `signal` and the deadline. */
  async function call(signal: AbortSignal, run: (sdk: Exa) => Promise<unknown>): Promise<unknown> {
    const sdk = new ExaOverMesh(
      config.apiKey,
      root,
      transportFor(root, config, { clock, fetch }, signal),
    );
    try {
      return await run(sdk);
    } catch (error) {
      // The SDK's own checks throw before anything is sent; their text is the SDK's.
      if (error instanceof ExaError) {
        throw new QueryProviderError('bad_request', 'exa-js refused the request before sending it');
      }
      throw error;
    }
  }

  const adapter: QueryProviderAdapter = {
    kind: 'exa',
    capabilities: EXA_CAPABILITIES,
    async search(request) {
      const count = checkedSearch('exa', EXA_CAPABILITIES, request);
      const options: RegularSearchOptions = {
        numResults: count,
        // Query-relevant excerpts, capped: the snippet, not the page.
        contents: { highlights: { maxCharacters: SNIPPET_MAX_CHARS } },
      };
      if (request.recency !== undefined) {
        const since = clock.now().getTime() - RECENCY_DAYS[request.recency] * DAY_MS;
        options.startPublishedDate = new Date(since).toISOString();
      }
      if (request.includeDomains?.length) options.includeDomains = [...request.includeDomains];
      if (request.excludeDomains?.length) options.excludeDomains = [...request.excludeDomains];
      const body = await call(request.signal, (sdk) => sdk.search(request.query, options));
      const results = isRecord(body) ? body['results'] : undefined;
      if (!Array.isArray(results)) throw malformed('exa');
      return normalizeResults(
        results.filter(isRecord).map((result) => ({
          title: result['title'],
          url: result['url'],
          snippet: snippetOf(result),
          publishedAt: result['publishedDate'],
        })),
        count,
      );
    },
    async read(request) {
      const body = await call(request.signal, (sdk) =>
        sdk.getContents([request.url], { text: true }),
      );
      if (!isRecord(body) || !Array.isArray(body['results'])) throw malformed('exa');
      // Since May 2025 a page Exa cannot fetch is a 200 whose `statuses` entry says so.
      const statuses = Array.isArray(body['statuses']) ? body['statuses'].filter(isRecord) : [];
      const failed = statuses.find((status) => status['status'] === 'error');
      if (failed !== undefined) {
        const error = failed['error'];
        throw unreadablePage('exa', errorCodeOf(isRecord(error) ? error['tag'] : undefined));
      }
      const page = body['results'].find(isRecord);
      const text = page?.['text'];
      if (page === undefined || typeof text !== 'string' || text.trim() === '') {
        throw unreadablePage('exa');
      }
      const title = page['title'];
      return Object.freeze({
        url: httpUrl(page['url'])?.href ?? request.url,
        ...(typeof title === 'string' && title !== '' ? { title } : {}),
        // Exa's `text` is the page's main content as markdown.
        markdown: text,
      });
    },
  };
  return Object.freeze(adapter);
}

/** Sends what exa-js built with sendJson: to `root` only, under `signal` and the deadline. */
function transportFor(
  root: string,
  config: QueryProviderConfig,
  { clock, fetch }: { readonly clock: Clock; readonly fetch: HttpFetch },
  signal: AbortSignal,
): ExaTransport {
  return async (endpoint, method, body, params, headers) => {
    // search and getContents POST a JSON body; only other parts of the SDK (websets, research)
    // use other methods or a query string.
    if ((method !== 'POST' && method !== 'GET') || Object.keys(params ?? {}).length > 0) {
      throw new QueryProviderError(
        'unsupported',
        'the exa adapter sends only what search and getContents need',
      );
    }
    const { body: answer } = await sendJson({
      kind: 'exa',
      method,
      url: `${root}${endpoint}`,
      headers: { ...headers, 'x-api-key': config.apiKey },
      ...(body === undefined ? {} : { body: body as JsonValue }),
      timeoutMs: config.timeoutMs,
      signal,
      clock,
      fetch,
      // Exa's errors are `{requestId, error, tag}`; newer ones nest `{error: {code, …}}`.
      errorCode: (error) =>
        isRecord(error)
          ? (error['tag'] ?? (isRecord(error['error']) ? error['error']['code'] : undefined))
          : undefined,
      // 402: the account's credits or the key's budget are spent, Exa's quota error.
      classify: (status) => (status === 402 ? 'rate_limited' : undefined),
    });
    return answer;
  };
}

function snippetOf(result: Readonly<Record<string, unknown>>): unknown {
  const highlights = result['highlights'];
  if (Array.isArray(highlights)) {
    const parts = highlights.filter((part): part is string => typeof part === 'string');
    if (parts.length > 0) return parts.join(' … ');
  }
  return result['text'];
}
