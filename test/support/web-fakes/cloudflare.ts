import type { FakeAnswer, FakeVendor } from './fake-server.ts';
import { fakeMarkdown } from './fake-content.ts';

/*
 * Cloudflare's API v4, the Browser Run `/markdown` quick action:
 * `POST /client/v4/accounts/{account_id}/browser-rendering/markdown` `{url}` with
 * `Authorization: Bearer <token>`, answered `{success: true, result: "<markdown>"}`. Failures use
 * the v4 envelope `{success: false, errors: [{code, message}], messages: [], result: null}`: a
 * missing or wrong token is 401 code 10000, an account the token does not cover 403 code 10000,
 * a page the browser could not render 422.
 */

const MARKDOWN_PATH = /^\/client\/v4\/accounts\/([^/]+)\/browser-rendering\/markdown$/;

function failure(status: number, code: number, message: string): FakeAnswer {
  return {
    status,
    body: { success: false, errors: [{ code, message }], messages: [], result: null },
  };
}

export function cloudflareVendor(apiKey: string, accountId: string): FakeVendor {
  return {
    kind: 'cloudflare',
    credentialHeaders: ['authorization'],
    authorized: (headers) => headers.authorization === `Bearer ${apiKey}`,
    unauthorized: () => failure(401, 10000, 'Authentication error'),
    // Codes of the fake's own (never 10000, which means "authentication").
    errorBody: (status) => failure(status, 9000 + (status % 1000), `Fake failure ${status}`).body,
    notFound: () => failure(404, 7003, 'No route for the URI'),
    route(request, path, state) {
      const match = MARKDOWN_PATH.exec(path);
      if (request.method !== 'POST' || match === null) return undefined;
      if (match[1] !== accountId) return failure(403, 10000, 'Authentication error');
      const body = request.body as Record<string, unknown> | undefined;
      const url = typeof body === 'object' && body !== null ? body['url'] : undefined;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
        return failure(400, 2001, 'Request body is invalid: url must be an http(s) URL');
      }
      if (state.unreadable.has(url)) return failure(422, 2002, 'Navigation failed');
      return { status: 200, body: { success: true, result: fakeMarkdown(url) } };
    },
  };
}
