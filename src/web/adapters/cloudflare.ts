import type { Clock } from '../../tool/clock.ts';
import {
  QueryProviderError,
  type QueryProviderAdapter,
  type QueryProviderCapabilities,
  type QueryProviderConfig,
  type HttpFetch,
} from '../provider.ts';
import { errorCodeOf, malformed, unreadablePage } from './failures.ts';
import { sendJson } from './http.ts';
import { isRecord } from './normalize.ts';
import { cannotSearch, checkedRoot } from './preflight.ts';

/*
 * Cloudflare Browser Run (formerly Browser Rendering), its `/markdown` quick action, over the
 * documented REST API (API v4). It renders a page in a headless browser and answers markdown;
 * it does not search.
 */

export const CLOUDFLARE_CAPABILITIES: QueryProviderCapabilities = Object.freeze({ read: true });

/** Cloudflare account ids are 32 hex digits; anything else would change the request's path. */
const ACCOUNT_ID = /^[0-9a-f]{32}$/i;
/** Cloudflare's "Authentication error", whatever status it comes with. */
const AUTHENTICATION_ERROR = '10000';

export function cloudflareAdapter(
  config: QueryProviderConfig,
  clock: Clock,
  fetch: HttpFetch,
): QueryProviderAdapter {
  const root = checkedRoot('cloudflare', config);
  const accountId = config.settings['accountId'];
  if (accountId === undefined || accountId === '') {
    throw new QueryProviderError('bad_request', 'cloudflare needs the accountId setting');
  }
  if (!ACCOUNT_ID.test(accountId)) {
    throw new QueryProviderError(
      'bad_request',
      'cloudflare: the accountId setting must be a Cloudflare account id (32 hex digits)',
    );
  }
  const url = `${root}/client/v4/accounts/${accountId}/browser-rendering/markdown`;

  const adapter: QueryProviderAdapter = {
    kind: 'cloudflare',
    capabilities: CLOUDFLARE_CAPABILITIES,
    async search() {
      throw cannotSearch('cloudflare');
    },
    async read(request) {
      const answer = await sendJson({
        kind: 'cloudflare',
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${config.apiKey}` },
        body: { url: request.url },
        timeoutMs: config.timeoutMs,
        signal: request.signal,
        clock,
        fetch,
        errorCode: firstErrorCode,
        classify: (status, code) => {
          if (code === AUTHENTICATION_ERROR) return 'bad_credential';
          // Documented: the page could not be rendered (it crashed, ran out of memory, blocked).
          if (status === 422) return 'unreadable';
          return undefined;
        },
      });
      const { body } = answer;
      if (!isRecord(body) || typeof body['success'] !== 'boolean') {
        throw malformed('cloudflare', answer.status);
      }
      if (!body['success']) throw unreadablePage('cloudflare', errorCodeOf(firstErrorCode(body)));
      const markdown = body['result'];
      if (typeof markdown !== 'string') throw malformed('cloudflare', answer.status);
      if (markdown.trim() === '') throw unreadablePage('cloudflare');
      // The answer does not say where a redirect led: the URL asked for is the URL read.
      return Object.freeze({ url: request.url, markdown });
    },
  };
  return Object.freeze(adapter);
}

/** `errors[0].code` of Cloudflare's v4 envelope `{success, errors: [{code, message}], result}`. */
function firstErrorCode(body: unknown): unknown {
  if (!isRecord(body) || !Array.isArray(body['errors'])) return undefined;
  const first: unknown = body['errors'][0];
  return isRecord(first) ? first['code'] : undefined;
}
