import type { FakeAnswer, FakeVendor } from './fake-server.ts';
import { fakeMarkdown, fakeResults, stringList } from './fake-content.ts';

/*
 * Tavily's API: `Authorization: Bearer <key>` (401 `{detail: {error}}` without it), `POST /search`
 * `{query, max_results, time_range, include_domains, exclude_domains}` answering `results[]` with
 * `published_date` as an RFC 1123 date, and `POST /extract` `{urls, format}` answering
 * `results[{url, raw_content}]` and `failed_results[{url, error}]`.
 */

const TIME_RANGES = new Set(['day', 'week', 'month', 'year', 'd', 'w', 'm', 'y']);

function error(status: number, message: string): FakeAnswer {
  return { status, body: { detail: { error: message } } };
}

export function tavilyVendor(apiKey: string): FakeVendor {
  return {
    kind: 'tavily',
    credentialHeaders: ['authorization'],
    authorized: (headers) => headers.authorization === `Bearer ${apiKey}`,
    unauthorized: () => error(401, 'Unauthorized: missing or invalid API key.'),
    errorBody: (status) => error(status, `Fake failure with status ${status}`).body,
    notFound: () => ({ status: 404, body: { detail: 'Not Found' } }),
    route(request, path, state) {
      const body = request.body as Record<string, unknown> | undefined;
      if (request.method !== 'POST' || typeof body !== 'object' || body === null) return undefined;
      if (path === '/search') {
        const { query, max_results: count = 5, time_range: range } = body;
        if (typeof query !== 'string' || query === '') return error(400, 'Query is missing.');
        if (typeof count !== 'number' || count < 0 || count > 20) {
          return error(400, 'max_results must be between 0 and 20.');
        }
        if (range !== undefined && (typeof range !== 'string' || !TIME_RANGES.has(range))) {
          return error(400, 'Invalid time_range.');
        }
        const results =
          state.results ??
          fakeResults(query, count, stringList(body['include_domains'])).map((result, i) => ({
            title: result.title,
            url: result.url,
            content: result.snippet,
            score: 0.9 - i / 100,
            raw_content: null,
            published_date: result.publishedAt.toUTCString(),
          }));
        return {
          status: 200,
          body: {
            query,
            follow_up_questions: null,
            answer: null,
            images: [],
            results,
            response_time: 0.42,
            request_id: 'fake-search',
          },
        };
      }
      if (path === '/extract') {
        const urls = typeof body['urls'] === 'string' ? [body['urls']] : stringList(body['urls']);
        if (urls === undefined || urls.length === 0) return error(400, 'urls is required.');
        return {
          status: 200,
          body: {
            results: urls
              .filter((url) => !state.unreadable.has(url))
              .map((url) => ({ url, raw_content: fakeMarkdown(url), images: [] })),
            failed_results: urls
              .filter((url) => state.unreadable.has(url))
              .map((url) => ({ url, error: 'Failed to fetch url' })),
            response_time: 0.42,
            request_id: 'fake-extract',
          },
        };
      }
      return undefined;
    },
  };
}
