import type { JsonObject, JsonValue } from '../../model/json.ts';
import type { Clock } from '../../tool/clock.ts';
import type {
  QueryProviderAdapter,
  QueryProviderCapabilities,
  QueryProviderConfig,
  SearchFilter,
  HttpFetch,
} from '../provider.ts';
import { malformed, unreadablePage } from './failures.ts';
import { sendJson, type JsonRequest } from './http.ts';
import { httpUrl, isRecord, normalizeResults } from './normalize.ts';
import { checkedRoot, checkedSearch } from './preflight.ts';

/*
 * Tavily's documented HTTP API (`POST /search`, `POST /extract`), with the global fetch rather
 * than @tavily/core 0.7.13: that SDK takes its proxies from TAVILY_HTTP_PROXY/TAVILY_HTTPS_PROXY
 * (and axios from HTTP(S)_PROXY) with no option to turn that off, so it cannot promise that only
 * the configured base URL is contacted; it also adds headers from TAVILY_PROJECT/TAVILY_ORG_ID,
 * goes "keyless" on an empty key, takes no AbortSignal, and folds the HTTP status into its error
 * text. See docs/web-providers.md.
 */

/** Tavily's documented maximum `max_results`. */
const MAX_COUNT = 20;

export const TAVILY_CAPABILITIES: QueryProviderCapabilities = Object.freeze({
  search: Object.freeze({
    maxCount: MAX_COUNT,
    filters: new Set<SearchFilter>(['recency', 'include_domains', 'exclude_domains']),
  }),
  read: true,
});

export function tavilyAdapter(
  config: QueryProviderConfig,
  clock: Clock,
  fetch: HttpFetch,
): QueryProviderAdapter {
  const root = checkedRoot('tavily', config);

  function post(path: string, body: JsonObject, signal: AbortSignal) {
    const request: JsonRequest = {
      kind: 'tavily',
      method: 'POST',
      url: `${root}${path}`,
      headers: { authorization: `Bearer ${config.apiKey}` },
      body,
      timeoutMs: config.timeoutMs,
      signal,
      clock,
      fetch,
      // Tavily's errors are `{detail: {error: "<sentence>"}}`: no code worth naming.
      // 432 and 433 are its documented plan and pay-as-you-go limits.
      classify: (status) => (status === 432 || status === 433 ? 'rate_limited' : undefined),
    };
    return sendJson(request);
  }

  const adapter: QueryProviderAdapter = {
    kind: 'tavily',
    capabilities: TAVILY_CAPABILITIES,
    async search(request) {
      const count = checkedSearch('tavily', TAVILY_CAPABILITIES, request);
      const body: Record<string, JsonValue> = {
        query: request.query,
        max_results: count,
        search_depth: 'basic',
      };
      if (request.recency !== undefined) body['time_range'] = request.recency;
      if (request.includeDomains?.length) body['include_domains'] = [...request.includeDomains];
      if (request.excludeDomains?.length) body['exclude_domains'] = [...request.excludeDomains];
      const answer = await post('/search', body, request.signal);
      const results = isRecord(answer.body) ? answer.body['results'] : undefined;
      if (!Array.isArray(results)) throw malformed('tavily', answer.status);
      return normalizeResults(
        results.filter(isRecord).map((result) => ({
          title: result['title'],
          url: result['url'],
          snippet: result['content'],
          // Only given for topic "news", as an RFC 1123 date.
          publishedAt: result['published_date'],
        })),
        count,
      );
    },
    async read(request) {
      const answer = await post(
        '/extract',
        { urls: [request.url], format: 'markdown' },
        request.signal,
      );
      const { body } = answer;
      if (!isRecord(body) || !Array.isArray(body['results']))
        throw malformed('tavily', answer.status);
      const failed = body['failed_results'];
      if (Array.isArray(failed) && failed.length > 0) throw unreadablePage('tavily');
      const page = body['results'].find(isRecord);
      const markdown = page?.['raw_content'];
      if (page === undefined || typeof markdown !== 'string' || markdown.trim() === '') {
        throw unreadablePage('tavily');
      }
      const title = page['title'];
      return Object.freeze({
        url: httpUrl(page['url'])?.href ?? request.url,
        ...(typeof title === 'string' && title !== '' ? { title } : {}),
        markdown,
      });
    },
  };
  return Object.freeze(adapter);
}
