/*
 * Loopback fakes of the query providers' HTTP APIs (Exa, Brave Search, Tavily, Cloudflare
 * Browser Run), for the adapters' contract tests and for end-to-end tests that need a provider.
 * Each is a real `node:http` server on 127.0.0.1, a random port, speaking the vendor's documented
 * API: its credential header checked the vendor's way (a missing or wrong key gets the vendor's
 * documented refusal), its documented request parsed and its documented response shape answered
 * with deterministic content.
 *
 *   const fake = await startWebFake('exa', { apiKey: 'k' });
 *   // a provider row / QueryProviderConfig: baseUrl fake.baseUrl, apiKey 'k', settings fake.settings
 *   fake.requests;          // every request: method, path, query, headers (no credential), body, host
 *   fake.failNext(2, 503);  // the next 2 requests fail with the vendor's 503 body
 *   fake.failNext(1, 429, { retryAfterSeconds: 1 });
 *   fake.hangNext();        // the next request is never answered (a timeout)
 *   fake.state.unreadable.add('https://example.org/'); // reading it fails the vendor's way
 *   fake.state.results = [...];  // vendor-shaped search results, instead of the generated ones
 *   fake.reset();           // all of the above forgotten
 *   await fake.close();
 *
 * Searches answer `count` results for query q: result i is titled `Result i for q`, at
 * `https://docs.example.com/results/i` (the first included domain instead, when one is given),
 * excerpt `Excerpt i about q.`, published 2024-01-i 10:00 UTC (each vendor writing the date its
 * own way). Reading URL u answers `# Page at u …` (see fake-content.ts). `pathPrefix: '/gw'` puts
 * the API under a prefix (a gateway), and anything outside it is the vendor's 404. Cloudflare's
 * fake serves one account, `settings.accountId` (given, or a fixed one).
 */
import type { QueryProviderKind } from '../../../src/web/provider.ts';
import { braveVendor } from './brave.ts';
import { cloudflareVendor } from './cloudflare.ts';
import { exaVendor } from './exa.ts';
import { startFakeServer, type FakeVendor, type WebFake } from './fake-server.ts';
import { tavilyVendor } from './tavily.ts';

export type { FailureOptions, FakeState, RecordedRequest, WebFake } from './fake-server.ts';
export { FAKE_RESULT_HOST, fakeMarkdown, fakeResults, fakeTitle } from './fake-content.ts';

export interface WebFakeOptions {
  /** The key the fake accepts. */
  readonly apiKey: string;
  /** Serve the API under this path (`/gw`): `baseUrl` ends with it. */
  readonly pathPrefix?: string;
  /** Cloudflare: the one account the fake serves (32 hex digits). */
  readonly accountId?: string;
}

/** The account Cloudflare's fake serves when none is given. */
export const FAKE_CLOUDFLARE_ACCOUNT = '0123456789abcdef0123456789abcdef';

/** Starts a fake of `kind`'s API; close it when done. */
export async function startWebFake(
  kind: QueryProviderKind,
  options: WebFakeOptions,
): Promise<WebFake> {
  const accountId = options.accountId ?? FAKE_CLOUDFLARE_ACCOUNT;
  const vendor = vendorOf(kind, options.apiKey, accountId);
  return startFakeServer(vendor, {
    apiKey: options.apiKey,
    ...(options.pathPrefix === undefined ? {} : { pathPrefix: options.pathPrefix }),
    settings: kind === 'cloudflare' ? { accountId } : {},
  });
}

function vendorOf(kind: QueryProviderKind, apiKey: string, accountId: string): FakeVendor {
  switch (kind) {
    case 'exa':
      return exaVendor(apiKey);
    case 'brave':
      return braveVendor(apiKey);
    case 'tavily':
      return tavilyVendor(apiKey);
    case 'cloudflare':
      return cloudflareVendor(apiKey, accountId);
    default: {
      const unknown: never = kind;
      throw new Error(`no fake for ${String(unknown)}`);
    }
  }
}
