import type { Clock } from '../../tool/clock.ts';
import type {
  QueryProviderAdapter,
  QueryProviderCapabilities,
  QueryProviderConfig,
  Recency,
  SearchFilter,
  HttpFetch,
} from '../provider.ts';
import { malformed } from './failures.ts';
import { sendJson } from './http.ts';
import { isRecord, normalizeResults, type RawSearchResult } from './normalize.ts';
import { cannotRead, checkedRoot, checkedSearch } from './preflight.ts';

/*
 * Brave Search API, web search (`GET /res/v1/web/search`), over its documented HTTP API: Brave
 * publishes no JavaScript SDK. Brave has no domain filter parameters; rewriting the query with
 * `site:` operators would change what the model asked for, so those filters are refused.
 */

/** Brave's documented maximum `count` for web search. */
const MAX_COUNT = 20;

export const BRAVE_CAPABILITIES: QueryProviderCapabilities = Object.freeze({
  search: Object.freeze({ maxCount: MAX_COUNT, filters: new Set<SearchFilter>(['recency']) }),
  read: false,
});

const FRESHNESS: Readonly<Record<Recency, string>> = {
  day: 'pd',
  week: 'pw',
  month: 'pm',
  year: 'py',
};

export function braveAdapter(
  config: QueryProviderConfig,
  clock: Clock,
  fetch: HttpFetch,
): QueryProviderAdapter {
  const root = checkedRoot('brave', config);
  const adapter: QueryProviderAdapter = {
    kind: 'brave',
    capabilities: BRAVE_CAPABILITIES,
    async search(request) {
      const count = checkedSearch('brave', BRAVE_CAPABILITIES, request);
      const params = new URLSearchParams({ q: request.query, count: String(count) });
      if (request.recency !== undefined) params.set('freshness', FRESHNESS[request.recency]);
      const { body } = await sendJson({
        kind: 'brave',
        method: 'GET',
        url: `${root}/res/v1/web/search?${params.toString()}`,
        headers: { 'x-subscription-token': config.apiKey },
        timeoutMs: config.timeoutMs,
        signal: request.signal,
        clock,
        fetch,
        errorCode: (error) =>
          isRecord(error) && isRecord(error['error']) ? error['error']['code'] : undefined,
        // Brave answers a missing or wrong token with 422, not 401.
        classify: (status, code) =>
          status === 422 && code === 'SUBSCRIPTION_TOKEN_INVALID' ? 'bad_credential' : undefined,
      });
      return normalizeResults(webResults(body), count);
    },
    async read() {
      throw cannotRead('brave');
    },
  };
  return Object.freeze(adapter);
}

/** `web.results[]` of a search answer; an answer without `web` found nothing. */
function webResults(body: unknown): RawSearchResult[] {
  if (!isRecord(body)) throw malformed('brave');
  const web = body['web'];
  if (web === undefined) return [];
  if (!isRecord(web) || !Array.isArray(web['results'])) throw malformed('brave');
  return web['results'].filter(isRecord).map((result) => ({
    title: result['title'],
    url: result['url'],
    // Brave marks the query's words with <strong>; normalization strips the tags.
    snippet: result['description'],
    // `page_age` is a date-time; `age` may be a date or a relative "2 days ago".
    publishedAt: result['page_age'] ?? result['age'],
  }));
}
