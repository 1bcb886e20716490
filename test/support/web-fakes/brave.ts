import type { FakeAnswer, FakeVendor } from './fake-server.ts';
import { fakeResults } from './fake-content.ts';

/*
 * Brave Search's web search, `GET /res/v1/web/search`: the token in `X-Subscription-Token`, a
 * missing or wrong one answered 422 `SUBSCRIPTION_TOKEN_INVALID` (Brave does not use 401), errors
 * as `{type: "ErrorResponse", error: {id, status, code, detail, meta}, time}`. Descriptions mark
 * the query with `<strong>` and escape HTML as Brave's do; `page_age` names no zone.
 */

const CODES: Readonly<Record<number, string>> = {
  400: 'VALIDATION',
  404: 'NOT_FOUND',
  422: 'VALIDATION',
  429: 'RATE_LIMITED',
};
const FRESHNESS = /^(?:pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$/;

export function braveVendor(apiKey: string): FakeVendor {
  let served = 0;
  function error(status: number, code: string, detail: string): FakeAnswer {
    served++;
    return {
      status,
      body: {
        type: 'ErrorResponse',
        error: { id: `fake-${served}`, status, code, detail, meta: {} },
        time: 1_700_000_000 + served,
      },
    };
  }
  const invalid = (): FakeAnswer =>
    error(422, 'VALIDATION', 'Unable to validate request parameter(s)');
  return {
    kind: 'brave',
    credentialHeaders: ['x-subscription-token'],
    authorized: (headers) => headers['x-subscription-token'] === apiKey,
    unauthorized: () =>
      error(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.'),
    errorBody: (status) =>
      error(status, CODES[status] ?? (status >= 500 ? 'INTERNAL' : 'ERROR'), 'Fake failure').body,
    notFound: () => error(404, 'NOT_FOUND', 'Not found'),
    route(request, path, state) {
      if (request.method !== 'GET' || path !== '/res/v1/web/search') return undefined;
      const { q, count = '20', freshness } = request.query;
      if (q === undefined || q === '') return invalid();
      const n = Number(count);
      if (!Number.isInteger(n) || n < 1 || n > 20) return invalid();
      if (freshness !== undefined && !FRESHNESS.test(freshness)) return invalid();
      const results =
        state.results ??
        fakeResults(q, n).map((result) => {
          const at = result.publishedAt;
          return {
            type: 'search_result',
            title: result.title,
            url: result.url,
            description: `Excerpt ${result.url.split('/').pop()} about <strong>${escapeHtml(q)}</strong>.`,
            page_age: at.toISOString().slice(0, 19),
            // "January 1, 2024", as Brave writes it.
            age: at.toLocaleDateString('en-US', { timeZone: 'UTC', dateStyle: 'long' }),
            meta_url: { scheme: 'https', hostname: new URL(result.url).hostname },
            language: 'en',
            family_friendly: true,
          };
        });
      return {
        status: 200,
        body: {
          type: 'search',
          query: { original: q, more_results_available: false },
          web: { type: 'search', results, family_friendly: true },
        },
      };
    },
  };
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#x27;');
}
