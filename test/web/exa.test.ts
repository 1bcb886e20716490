import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTRACT_FILTERS, describeQueryAdapterContract } from './adapter-contract.ts';
import { adapterFor, failureOf, KEY } from './adapter-fixtures.ts';
import { fakeTitle, startWebFake, type WebFake } from '../support/web-fakes/index.ts';

type ExaBody = Record<string, unknown>;
const body = (request: { body: unknown }): ExaBody => request.body as ExaBody;

describeQueryAdapterContract('exa', {
  search: {
    count: (request) => body(request)['numResults'],
    filters: {
      // A week before the contract's clock (2024-06-15T12:00Z).
      recency: { sent: (r) => body(r)['startPublishedDate'], expected: '2024-06-08T12:00:00.000Z' },
      include_domains: {
        sent: (r) => body(r)['includeDomains'],
        expected: CONTRACT_FILTERS.include_domains,
      },
      exclude_domains: {
        sent: (r) => body(r)['excludeDomains'],
        expected: CONTRACT_FILTERS.exclude_domains,
      },
    },
    rawResult: ({ title, url, snippet, publishedAt }) => ({
      id: url,
      title: title ?? null,
      url,
      ...(publishedAt === undefined ? {} : { publishedDate: publishedAt }),
      highlights: [snippet],
    }),
  },
});

describe('the exa adapter (Exa specifics)', () => {
  const page = 'https://pages.example.org/exa';
  let fake: WebFake;
  beforeAll(async () => {
    fake = await startWebFake('exa', { apiKey: KEY });
  });
  afterEach(() => {
    fake.reset();
    vi.unstubAllEnvs();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('searches with POST /search, asking for highlights capped at the snippet length', async () => {
    await adapterFor('exa', fake).search({
      query: 'q',
      count: 2,
      signal: AbortSignal.timeout(5_000),
    });
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/search', authorized: true });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).toEqual({
      query: 'q',
      numResults: 2,
      contents: { highlights: { maxCharacters: 500 } },
    });
  });

  it('reads with POST /contents, asking for the text of that one URL', async () => {
    const result = await adapterFor('exa', fake).read({
      url: page,
      signal: AbortSignal.timeout(5_000),
    });
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/contents' });
    expect(fake.requests[0]!.body).toEqual({ urls: [page], text: true });
    expect(result.title).toBe(fakeTitle(page));
  });

  it("names Exa's status tag when a page cannot be fetched", async () => {
    fake.state.unreadable.add(page);
    const error = await failureOf(
      adapterFor('exa', fake).read({ url: page, signal: AbortSignal.timeout(5_000) }),
    );
    expect(error.message).toBe('exa could not read that page (CRAWL_NOT_FOUND)');
  });

  it('a 402 (credits or the key budget spent) is rate_limited', async () => {
    fake.failNext(1, 402);
    const error = await failureOf(
      adapterFor('exa', fake).search({ query: 'q', count: 1, signal: AbortSignal.timeout(5_000) }),
    );
    expect(error.reason).toBe('rate_limited');
    expect(error.status).toBe(402);
  });

  it('never falls back to EXA_API_KEY, as exa-js would for an empty key', async () => {
    vi.stubEnv('EXA_API_KEY', KEY);
    expect(() => adapterFor('exa', fake, { apiKey: '' })).toThrow(
      expect.objectContaining({ reason: 'bad_credential' }),
    );
    const error = await failureOf(
      adapterFor('exa', fake, { apiKey: 'another-key' }).search({
        query: 'q',
        count: 1,
        signal: AbortSignal.timeout(5_000),
      }),
    );
    expect(error.reason).toBe('bad_credential');
  });
});
