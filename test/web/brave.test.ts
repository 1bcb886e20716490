import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeQueryAdapterContract } from './adapter-contract.ts';
import { adapterFor, failureOf, KEY } from './adapter-fixtures.ts';
import { startWebFake, type WebFake } from '../support/web-fakes/index.ts';

describeQueryAdapterContract('brave', {
  search: {
    count: (request) => Number(request.query['count']),
    filters: { recency: { sent: (r) => r.query['freshness'], expected: 'pw' } },
    rawResult: ({ title, url, snippet, publishedAt }) => ({
      type: 'search_result',
      ...(title === undefined ? {} : { title }),
      url,
      description: snippet,
      ...(publishedAt === undefined ? {} : { page_age: publishedAt }),
    }),
  },
});

describe('the brave adapter (Brave specifics)', () => {
  let fake: WebFake;
  beforeAll(async () => {
    fake = await startWebFake('brave', { apiKey: KEY });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  const search = (count = 5) =>
    adapterFor('brave', fake).search({
      query: 'node streams',
      count,
      signal: AbortSignal.timeout(5_000),
    });

  it('searches with GET /res/v1/web/search?q=&count=, asking for JSON', async () => {
    await search(4);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'GET', path: '/res/v1/web/search', authorized: true });
    expect(request!.query).toEqual({ q: 'node streams', count: '4' });
    expect(request!.headers['accept']).toBe('application/json');
    expect(request!.body).toBeUndefined();
  });

  it('strips the HTML of titles and descriptions and decodes their character references', async () => {
    fake.state.results = [
      {
        title: 'Streams &amp; <strong>pipes</strong>',
        url: 'https://nodejs.org/api/stream.html',
        description: 'The <strong>fast</strong> &amp; <em>safe</em> way&#x27;s<br>next&nbsp;line',
      },
    ];
    const [result] = await search();
    expect(result).toMatchObject({
      title: 'Streams & pipes',
      snippet: "The fast & safe way's next line",
    });
  });

  it('reads page_age, else an absolute age, as the date; a relative age is no date', async () => {
    fake.state.results = [
      { title: 'a', url: 'https://a.example.net/', description: '', age: 'January 5, 2024' },
      { title: 'b', url: 'https://b.example.net/', description: '', age: '2 days ago' },
      {
        title: 'c',
        url: 'https://c.example.net/',
        description: '',
        page_age: '2024-03-01T08:30:00',
      },
    ];
    const results = await search();
    expect(results.map((r) => r.publishedAt)).toEqual([
      '2024-01-05T00:00:00.000Z',
      undefined,
      '2024-03-01T08:30:00.000Z',
    ]);
  });

  it('an answer without web results is no results', async () => {
    fake.failNext(1, 200, { body: JSON.stringify({ type: 'search', query: { original: 'x' } }) });
    expect(await search()).toEqual([]);
  });

  it("Brave's 422 SUBSCRIPTION_TOKEN_INVALID is bad_credential; its other 422s are bad_request", async () => {
    const refused = await failureOf(
      adapterFor('brave', fake, { apiKey: 'wrong' }).search({
        query: 'x',
        count: 1,
        signal: AbortSignal.timeout(5_000),
      }),
    );
    expect(refused.reason).toBe('bad_credential');
    expect(refused.message).toBe(
      'brave refused the API key (HTTP 422, SUBSCRIPTION_TOKEN_INVALID)',
    );

    fake.failNext(1, 422);
    const invalid = await failureOf(search());
    expect(invalid.reason).toBe('bad_request');
    expect(invalid.message).toBe('brave refused the request (HTTP 422, VALIDATION)');
  });
});
