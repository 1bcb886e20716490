import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { capabilitiesOf, createQueryProviderAdapter } from '../../src/web/adapters/index.ts';
import {
  isQueryProviderError,
  type QueryProviderAdapter,
  type QueryProviderError,
  type QueryProviderKind,
  type SearchFilter,
  type SearchRequest,
} from '../../src/web/provider.ts';
import { withRetries } from '../../src/web/retry.ts';
import {
  FAKE_RESULT_HOST,
  startWebFake,
  type RecordedRequest,
  type WebFake,
} from '../support/web-fakes/index.ts';
import { adapterFor, configFor, failureOf, KEY } from './adapter-fixtures.ts';

/*
 * The contract every query-provider adapter keeps, run by test/web/<kind>.test.ts against the
 * adapter and its vendor's loopback fake. What differs per vendor — how its documented request
 * carries the count and each filter, what its raw results look like — is given by the caller.
 */

const WRONG_KEY = 'mesh-wrong-key-55e0aa';
const QUERY = 'contract query 7f3e';
const PAGE = 'https://pages.example.org/articles/contract-7f3e';
const ALL_FILTERS: readonly SearchFilter[] = ['recency', 'include_domains', 'exclude_domains'];

/** The filter values the contract searches with; a vendor's wire says how each must appear. */
export const CONTRACT_FILTERS = {
  recency: 'week',
  include_domains: ['nodejs.org', 'developer.mozilla.org'],
  exclude_domains: ['w3schools.com'],
} as const;

/** Neutral fields of one raw result, for a vendor to put in its own shape. */
export interface RawFields {
  readonly title?: string;
  readonly url: string;
  readonly snippet: string;
  readonly publishedAt?: string;
}

/** How one filter shows in the vendor's documented request. */
export interface FilterWire {
  readonly sent: (request: RecordedRequest) => unknown;
  readonly expected: unknown;
}

export interface SearchWire {
  /** The count as the vendor's documented request carries it. */
  readonly count: (request: RecordedRequest) => unknown;
  /** Each supported filter, for the values in CONTRACT_FILTERS (exactly the supported ones). */
  readonly filters: { readonly [F in SearchFilter]?: FilterWire };
  /** A raw result in the vendor's answer shape, for `fake.state.results`. */
  readonly rawResult: (fields: RawFields) => unknown;
}

export interface ContractOptions {
  /** Required when the kind can search. */
  readonly search?: SearchWire;
}

function live(): AbortSignal {
  return new AbortController().signal;
}

function searchRequest(filter: SearchFilter, count = 2): SearchRequest {
  const signal = live();
  switch (filter) {
    case 'recency':
      return { query: QUERY, count, recency: CONTRACT_FILTERS.recency, signal };
    case 'include_domains':
      return { query: QUERY, count, includeDomains: CONTRACT_FILTERS.include_domains, signal };
    case 'exclude_domains':
      return { query: QUERY, count, excludeDomains: CONTRACT_FILTERS.exclude_domains, signal };
  }
}

/** The text of an error that might leak: its message and its serialized form. */
function exposed(error: QueryProviderError): string {
  return `${error.message}\n${JSON.stringify(error)}`;
}

export function describeQueryAdapterContract(
  kind: QueryProviderKind,
  options: ContractOptions,
): void {
  const capabilities = capabilitiesOf(kind);
  let fake: WebFake;

  /** The one call every kind can make: a search, or a read for a reader. */
  function probe(adapter: QueryProviderAdapter, signal = live()): Promise<unknown> {
    return capabilities.search !== undefined
      ? adapter.search({ query: QUERY, count: 2, signal })
      : adapter.read({ url: PAGE, signal });
  }

  describe(`the ${kind} adapter (query-provider contract)`, () => {
    beforeAll(async () => {
      fake = await startWebFake(kind, { apiKey: KEY });
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await fake.close();
    });

    it('declares the capabilities capabilitiesOf gives for its kind', () => {
      const adapter = adapterFor(kind, fake);
      expect(adapter.kind).toBe(kind);
      expect(adapter.capabilities).toBe(capabilities);
    });

    const search = capabilities.search;
    if (search !== undefined) {
      const wire = options.search;
      if (wire === undefined) throw new Error(`${kind} searches: the contract needs its wire`);

      it('searches: title, URL, plain-text snippet and ISO date, as many as asked for', async () => {
        const results = await adapterFor(kind, fake).search({
          query: QUERY,
          count: 3,
          signal: live(),
        });
        expect(results).toEqual(
          [1, 2, 3].map((i) => ({
            title: `Result ${i} for ${QUERY}`,
            url: `https://${FAKE_RESULT_HOST}/results/${i}`,
            snippet: `Excerpt ${i} about ${QUERY}.`,
            publishedAt: `2024-01-0${i}T10:00:00.000Z`,
          })),
        );
        expect(fake.requests).toHaveLength(1);
        expect(wire.count(fake.requests[0]!)).toBe(3);
      });

      it(`asks for no more than its maxCount (${search.maxCount})`, async () => {
        await adapterFor(kind, fake).search({ query: QUERY, count: 1_000, signal: live() });
        expect(wire.count(fake.requests[0]!)).toBe(search.maxCount);
      });

      it('normalizes what it is given: host for a missing title, http(s) only, snippets collapsed and capped', async () => {
        fake.state.results = [
          wire.rawResult({ url: 'https://a.example.net/x', snippet: ' many \n  spaces\there ' }),
          wire.rawResult({ title: 'FTP', url: 'ftp://files.example.net/f', snippet: 's' }),
          wire.rawResult({ title: 'Script', url: 'javascript:alert(1)', snippet: 's' }),
          wire.rawResult({
            title: 'Long',
            url: 'https://b.example.net/',
            snippet: 'word '.repeat(300),
            publishedAt: 'not a date',
          }),
        ];
        const results = await adapterFor(kind, fake).search({
          query: QUERY,
          count: 10,
          signal: live(),
        });
        expect(results.map((r) => r.url)).toEqual([
          'https://a.example.net/x',
          'https://b.example.net/',
        ]);
        expect(results[0]).toMatchObject({ title: 'a.example.net', snippet: 'many spaces here' });
        expect(results[1]!.snippet.length).toBeLessThanOrEqual(500);
        expect(results[1]!.snippet.endsWith('…')).toBe(true);
        expect(results[1]).not.toHaveProperty('publishedAt');
      });

      it('the wire the test gives covers exactly the filters it supports', () => {
        expect(Object.keys(wire.filters).sort()).toEqual([...search.filters].sort());
      });

      for (const filter of ALL_FILTERS) {
        if (search.filters.has(filter)) {
          it(`sends the ${filter} filter in ${kind}'s documented form`, async () => {
            await adapterFor(kind, fake).search(searchRequest(filter));
            const filterWire = wire.filters[filter];
            expect(filterWire, `the wire of ${filter}`).toBeDefined();
            expect(filterWire!.sent(fake.requests[0]!)).toEqual(filterWire!.expected);
          });
        } else {
          it(`refuses the ${filter} filter by name before sending anything`, async () => {
            const error = await failureOf(adapterFor(kind, fake).search(searchRequest(filter)));
            expect(error.reason).toBe('unsupported');
            expect(error.message).toBe(`${kind} does not support the ${filter} filter`);
            expect(fake.requests).toHaveLength(0);
          });
        }
      }
    } else {
      it('refuses to search (unsupported) without sending anything', async () => {
        const error = await failureOf(
          adapterFor(kind, fake).search({ query: QUERY, count: 2, signal: live() }),
        );
        expect(error.reason).toBe('unsupported');
        expect(error.message).toBe(`${kind} cannot search the web`);
        expect(fake.requests).toHaveLength(0);
      });
    }

    if (capabilities.read) {
      it('reads a page as markdown', async () => {
        const page = await adapterFor(kind, fake).read({ url: PAGE, signal: live() });
        expect(page.url).toBe(PAGE);
        expect(page.markdown).toContain(`# Page at ${PAGE}`);
        expect(fake.requests).toHaveLength(1);
      });

      it('a page it cannot read is unreadable, not retried, and not named', async () => {
        fake.state.unreadable.add(PAGE);
        const adapter = adapterFor(kind, fake);
        const error = await failureOf(
          withRetries(() => adapter.read({ url: PAGE, signal: live() }), {
            maxAttempts: 3,
            signal: live(),
            baseDelayMs: 1,
          }),
        );
        expect(error.reason).toBe('unreadable');
        expect(error.attempts).toBe(1);
        expect(error.message).not.toContain(PAGE);
        expect(fake.requests).toHaveLength(1);
      });
    } else {
      it('refuses to read (unsupported) without sending anything', async () => {
        const error = await failureOf(adapterFor(kind, fake).read({ url: PAGE, signal: live() }));
        expect(error.reason).toBe('unsupported');
        expect(error.message).toBe(`${kind} cannot read pages`);
        expect(fake.requests).toHaveLength(0);
      });
    }

    describe('failures', () => {
      it('a wrong key is bad_credential, never retried, and no key is in the error', async () => {
        const adapter = adapterFor(kind, fake, { apiKey: WRONG_KEY });
        const error = await failureOf(
          withRetries(() => probe(adapter), { maxAttempts: 3, signal: live(), baseDelayMs: 1 }),
        );
        expect(error.reason).toBe('bad_credential');
        expect(error.attempts).toBe(1);
        expect(exposed(error)).not.toContain(WRONG_KEY);
        expect(exposed(error)).not.toContain(KEY);
        expect(fake.requests.map((r) => r.authorized)).toEqual([false]);
      });

      it('503 then success: withRetries succeeds on the second attempt and counts both', async () => {
        fake.failNext(1, 503);
        const adapter = adapterFor(kind, fake);
        const counted: number[] = [];
        await withRetries(() => probe(adapter), {
          maxAttempts: 3,
          signal: live(),
          baseDelayMs: 1,
          onAttempt: (n) => counted.push(n),
        });
        expect(counted).toEqual([1, 2]);
        expect(fake.requests).toHaveLength(2);
      });

      it('maxAttempts is a ceiling: 5 failures, 3 attempts, provider_down', async () => {
        fake.failNext(5, 503);
        const adapter = adapterFor(kind, fake);
        const error = await failureOf(
          withRetries(() => probe(adapter), { maxAttempts: 3, signal: live(), baseDelayMs: 1 }),
        );
        expect(error.reason).toBe('provider_down');
        expect(error.attempts).toBe(3);
        expect(error.message).toContain(`${kind} failed (HTTP 503`);
        expect(fake.requests).toHaveLength(3);
      });

      it('429 is rate_limited and retried', async () => {
        fake.failNext(1, 429, { retryAfterSeconds: 1 });
        const adapter = adapterFor(kind, fake);
        const error = await failureOf(probe(adapter));
        expect(error.reason).toBe('rate_limited');
        expect(error.retryable).toBe(true);
        expect(error.retryAfterMs).toBe(1_000);

        fake.failNext(1, 429, { retryAfterSeconds: 1 });
        // maxDelayMs keeps the test from waiting the second the fake asks for.
        await withRetries(() => probe(adapter), {
          maxAttempts: 2,
          signal: live(),
          baseDelayMs: 1,
          maxDelayMs: 5,
        });
        expect(fake.requests).toHaveLength(3);
      });

      it('400 is bad_request, not retried, and names no argument', async () => {
        fake.failNext(3, 400);
        const adapter = adapterFor(kind, fake);
        const error = await failureOf(
          withRetries(() => probe(adapter), { maxAttempts: 3, signal: live(), baseDelayMs: 1 }),
        );
        expect(error.reason).toBe('bad_request');
        expect(error.status).toBe(400);
        for (const value of [QUERY, PAGE, KEY]) expect(exposed(error)).not.toContain(value);
        expect(fake.requests).toHaveLength(1);
      });

      it('an answer that is not JSON is provider_down', async () => {
        fake.failNext(1, 200, { body: '<html>a captive portal</html>' });
        const error = await failureOf(probe(adapterFor(kind, fake)));
        expect(error.reason).toBe('provider_down');
        expect(error.message).not.toContain('captive');
      });

      it('a request that outlives timeoutMs is provider_down', async () => {
        fake.hangNext();
        const error = await failureOf(probe(adapterFor(kind, fake, { timeoutMs: 100 })));
        expect(error.reason).toBe('provider_down');
        expect(error.message).toBe(`${kind} did not answer within 100 ms`);
      });

      it("the caller's abort rejects with its reason and sends nothing more", async () => {
        const controller = new AbortController();
        const reason = new Error('the run was cancelled');
        controller.abort(reason);
        await expect(probe(adapterFor(kind, fake), controller.signal)).rejects.toBe(reason);
        await expect(
          withRetries(() => probe(adapterFor(kind, fake)), {
            maxAttempts: 3,
            signal: controller.signal,
          }),
        ).rejects.toBe(reason);
        expect(fake.requests).toHaveLength(0);
      });

      it('a provider that cannot be reached is provider_down', async () => {
        const gone = await startWebFake(kind, { apiKey: KEY });
        await gone.close();
        const error = await failureOf(probe(adapterFor(kind, gone)));
        expect(error.reason).toBe('provider_down');
        expect(error.message).toMatch(new RegExp(`^${kind} could not be reached`));
      });
    });

    describe('where requests go', () => {
      it('keeps the path prefix of a base URL (a gateway)', async () => {
        const gateway = await startWebFake(kind, { apiKey: KEY, pathPrefix: '/gw/v1' });
        try {
          await probe(adapterFor(kind, gateway));
          expect(gateway.requests).toHaveLength(1);
          expect(gateway.requests[0]!.path.startsWith('/gw/v1/')).toBe(true);
        } finally {
          await gateway.close();
        }
      });

      it('does not follow a redirect: a 3xx is provider_down and its location is never asked', async () => {
        const elsewhere = await startWebFake(kind, { apiKey: KEY });
        try {
          fake.failNext(1, 307, { headers: { location: `${elsewhere.baseUrl}/stolen` } });
          const error = await failureOf(probe(adapterFor(kind, fake)));
          expect(error).toMatchObject({ reason: 'provider_down', status: 307 });
          expect(elsewhere.requests).toHaveLength(0);
        } finally {
          await elsewhere.close();
        }
      });

      it('sends to the configured base URL and nowhere else, through the guarded fetch', async () => {
        // undici announces every request the global fetch makes, whoever holds a reference to it:
        // an adapter makes none. What it sends goes through the egress seam, seen here.
        const global: string[] = [];
        const onRequest = (message: unknown): void => {
          global.push((message as { request: { origin: string } }).request.origin);
        };
        const sent: string[] = [];
        const guarded = createGuardedFetch({ allowLoopbackHttp: true });
        subscribe('undici:request:create', onRequest);
        try {
          const adapter = createQueryProviderAdapter(kind, configFor(fake), {
            fetch: (url, init) => {
              sent.push(new URL(String(url)).origin);
              return guarded(url, init);
            },
          });
          if (capabilities.search !== undefined) {
            await adapter.search({ query: QUERY, count: 2, signal: live() });
          }
          if (capabilities.read) await adapter.read({ url: PAGE, signal: live() });
        } finally {
          unsubscribe('undici:request:create', onRequest);
        }
        const base = new URL(fake.baseUrl);
        expect(global).toEqual([]);
        expect(sent.length).toBeGreaterThan(0);
        expect(new Set(sent)).toEqual(new Set([base.origin]));
        expect(new Set(fake.requests.map((r) => r.host))).toEqual(new Set([base.host]));
      });

      it('reaches a loopback base URL only with the development setting', async () => {
        const adapter = createQueryProviderAdapter(kind, {
          ...configFor(fake),
          allowLoopbackHttp: false,
        });
        const request =
          capabilities.search !== undefined
            ? adapter.search({ query: QUERY, count: 2, signal: live() })
            : adapter.read({ url: PAGE, signal: live() });
        const error = await failureOf(request);
        expect(error.reason).toBe('bad_request');
        expect(error.message).toMatch(/refused http:\/\/127\.0\.0\.1:\d+/);
        expect(fake.requests).toHaveLength(0);
      });
    });

    describe('configuration', () => {
      it('refuses an empty key at creation, before any request', () => {
        expect(() => adapterFor(kind, fake, { apiKey: '' })).toThrow(
          expect.objectContaining({ reason: 'bad_credential' }),
        );
      });

      it.each([
        ['not a URL', 'not a url'],
        ['another scheme', 'ftp://api.example.net'],
        ['a query string', 'https://api.example.net/?key=secret-in-url'],
        ['credentials', 'https://user:secret-in-url@api.example.net'],
      ])('refuses a base URL with %s, naming the setting but not its value', (_, baseUrl) => {
        let error: unknown;
        try {
          adapterFor(kind, fake, { baseUrl });
        } catch (e) {
          error = e;
        }
        expect(isQueryProviderError(error)).toBe(true);
        expect((error as QueryProviderError).reason).toBe('bad_request');
        expect((error as QueryProviderError).message).toContain('base URL');
        expect((error as QueryProviderError).message).not.toContain('secret-in-url');
      });
    });
  });
}
