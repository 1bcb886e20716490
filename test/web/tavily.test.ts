import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_FILTERS, describeQueryAdapterContract } from './adapter-contract.ts';
import { adapterFor, failureOf, KEY } from './adapter-fixtures.ts';
import { startWebFake, type WebFake } from '../support/web-fakes/index.ts';

type TavilyBody = Record<string, unknown>;
const body = (request: { body: unknown }): TavilyBody => request.body as TavilyBody;

describeQueryAdapterContract('tavily', {
  search: {
    count: (request) => body(request)['max_results'],
    filters: {
      recency: { sent: (r) => body(r)['time_range'], expected: 'week' },
      include_domains: {
        sent: (r) => body(r)['include_domains'],
        expected: CONTRACT_FILTERS.include_domains,
      },
      exclude_domains: {
        sent: (r) => body(r)['exclude_domains'],
        expected: CONTRACT_FILTERS.exclude_domains,
      },
    },
    rawResult: ({ title, url, snippet, publishedAt }) => ({
      title: title ?? '',
      url,
      content: snippet,
      score: 0.5,
      ...(publishedAt === undefined ? {} : { published_date: publishedAt }),
    }),
  },
});

describe('the tavily adapter (Tavily specifics)', () => {
  const page = 'https://pages.example.org/tavily';
  let fake: WebFake;
  beforeAll(async () => {
    fake = await startWebFake('tavily', { apiKey: KEY });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  const signal = () => AbortSignal.timeout(5_000);

  it('searches with POST /search and its documented snake_case body', async () => {
    await adapterFor('tavily', fake).search({ query: 'q', count: 3, signal: signal() });
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/search', authorized: true });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.body).toEqual({ query: 'q', max_results: 3, search_depth: 'basic' });
  });

  it('reads with POST /extract {urls, format: "markdown"}', async () => {
    const result = await adapterFor('tavily', fake).read({ url: page, signal: signal() });
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/extract' });
    expect(fake.requests[0]!.body).toEqual({ urls: [page], format: 'markdown' });
    expect(result.markdown).toContain(page);
  });

  it('a URL in failed_results is unreadable', async () => {
    fake.state.unreadable.add(page);
    const error = await failureOf(adapterFor('tavily', fake).read({ url: page, signal: signal() }));
    expect(error.reason).toBe('unreadable');
    expect(error.message).toBe('tavily could not read that page');
  });

  it('an extract result with empty raw_content is unreadable', async () => {
    fake.failNext(1, 200, {
      body: JSON.stringify({ results: [{ url: page, raw_content: '  ' }], failed_results: [] }),
    });
    const error = await failureOf(adapterFor('tavily', fake).read({ url: page, signal: signal() }));
    expect(error.reason).toBe('unreadable');
  });

  it.each([432, 433])('its plan-limit status %i is rate_limited', async (status) => {
    fake.failNext(1, status);
    const error = await failureOf(
      adapterFor('tavily', fake).search({ query: 'q', count: 1, signal: signal() }),
    );
    expect(error.reason).toBe('rate_limited');
    expect(error.status).toBe(status);
  });
});
