import type { FakeAnswer, FakeVendor } from './fake-server.ts';
import { fakeMarkdown, fakeResults, fakeTitle, stringList } from './fake-content.ts';

/*
 * Exa's API as exa-js 2.23.0 speaks it: `x-api-key` (or `Authorization: Bearer`), JSON bodies,
 * errors as `{requestId, error, tag}`. `POST /search` answers `results[]` with `highlights` or
 * `text` when `contents` asks for them; `POST /contents` answers per-URL `statuses[]` (a page it
 * cannot fetch is an `error` status in a 200, as Exa does since May 2025).
 */

const STATUS_TAGS: Readonly<Record<number, string>> = {
  400: 'INVALID_REQUEST_BODY',
  401: 'INVALID_API_KEY',
  402: 'NO_MORE_CREDITS',
  403: 'ACCESS_DENIED',
  404: 'NOT_FOUND',
  429: 'RATE_LIMIT_EXCEEDED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

export function exaVendor(apiKey: string): FakeVendor {
  let served = 0;
  function error(status: number, message: string): FakeAnswer {
    served++;
    return {
      status,
      body: { requestId: `fake-${served}`, error: message, tag: STATUS_TAGS[status] ?? 'ERROR' },
    };
  }
  return {
    kind: 'exa',
    credentialHeaders: ['x-api-key', 'authorization'],
    authorized: (headers) =>
      headers['x-api-key'] === apiKey || headers.authorization === `Bearer ${apiKey}`,
    unauthorized: () => error(401, 'Invalid API key'),
    errorBody: (status) => error(status, `Fake failure with status ${status}`).body,
    notFound: () => error(404, 'Not found'),
    route(request, path, state) {
      const body = request.body as Record<string, unknown> | undefined;
      if (request.method !== 'POST' || typeof body !== 'object' || body === null) return undefined;
      if (path === '/search') {
        const { query, numResults = 10 } = body;
        if (typeof query !== 'string' || query === '') return error(400, 'query is required');
        if (typeof numResults !== 'number' || numResults < 1 || numResults > 100) {
          return error(400, 'numResults must be between 1 and 100');
        }
        const contents = (body['contents'] ?? {}) as Record<string, unknown>;
        const generated = fakeResults(query, numResults, stringList(body['includeDomains']));
        const results =
          state.results ??
          generated.map((result, i) => ({
            id: result.url,
            title: result.title,
            url: result.url,
            publishedDate: result.publishedAt.toISOString(),
            author: null,
            score: 1 - i / 100,
            ...(contents['highlights'] === undefined
              ? {}
              : { highlights: [result.snippet], highlightScores: [0.9] }),
            ...(contents['text'] === undefined ? {} : { text: result.snippet }),
          }));
        return {
          status: 200,
          body: { requestId: 'fake-search', resolvedSearchType: 'neural', results },
        };
      }
      if (path === '/contents') {
        const urls = stringList(body['urls']);
        if (urls === undefined || urls.length === 0) return error(400, 'urls is required');
        const readable = urls.filter((url) => !state.unreadable.has(url));
        return {
          status: 200,
          body: {
            requestId: 'fake-contents',
            results: readable.map((url) => ({
              id: url,
              url,
              title: fakeTitle(url),
              text: fakeMarkdown(url),
            })),
            statuses: urls.map((url) =>
              state.unreadable.has(url)
                ? {
                    id: url,
                    status: 'error',
                    error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 },
                  }
                : { id: url, status: 'success' },
            ),
          },
        };
      }
      return undefined;
    },
  };
}
