import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQueryProviderAdapter } from '../../src/web/adapters/index.ts';
import { isQueryProviderError } from '../../src/web/provider.ts';
import { describeQueryAdapterContract } from './adapter-contract.ts';
import { adapterFor, configFor, failureOf, KEY } from './adapter-fixtures.ts';
import { FAKE_CLOUDFLARE_ACCOUNT, startWebFake, type WebFake } from '../support/web-fakes/index.ts';

describeQueryAdapterContract('cloudflare', {});

describe('the cloudflare adapter (Cloudflare specifics)', () => {
  const page = 'https://pages.example.org/cloudflare';
  let fake: WebFake;
  beforeAll(async () => {
    fake = await startWebFake('cloudflare', { apiKey: KEY });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
  });

  const signal = () => AbortSignal.timeout(5_000);

  it("reads with POST to the account's browser-rendering/markdown endpoint", async () => {
    await adapterFor('cloudflare', fake).read({ url: page, signal: signal() });
    const [request] = fake.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: `/client/v4/accounts/${FAKE_CLOUDFLARE_ACCOUNT}/browser-rendering/markdown`,
      authorized: true,
    });
    expect(request!.body).toEqual({ url: page });
  });

  it('success: false is unreadable, naming the first error code', async () => {
    fake.failNext(1, 200, {
      body: JSON.stringify({ success: false, errors: [{ code: 2002, message: 'nope' }] }),
    });
    const error = await failureOf(
      adapterFor('cloudflare', fake).read({ url: page, signal: signal() }),
    );
    expect(error.reason).toBe('unreadable');
    expect(error.message).toBe('cloudflare could not read that page (2002)');
  });

  it('a 422 (the browser could not render the page) is unreadable', async () => {
    fake.state.unreadable.add(page);
    const error = await failureOf(
      adapterFor('cloudflare', fake).read({ url: page, signal: signal() }),
    );
    expect(error).toMatchObject({ reason: 'unreadable', status: 422 });
  });

  it('an account the token does not cover (403, code 10000) is bad_credential', async () => {
    const other = 'fedcba9876543210fedcba9876543210';
    const adapter = adapterFor('cloudflare', fake, { settings: { accountId: other } });
    const error = await failureOf(adapter.read({ url: page, signal: signal() }));
    expect(error).toMatchObject({ reason: 'bad_credential', status: 403 });
  });

  it.each([
    ['missing', {}, 'cloudflare needs the accountId setting'],
    ['empty', { accountId: '' }, 'cloudflare needs the accountId setting'],
    [
      'not an account id',
      { accountId: '../../zones/secret-in-id' },
      'cloudflare: the accountId setting must be a Cloudflare account id (32 hex digits)',
    ],
  ])('refuses a %s accountId at creation', (_, settings, message) => {
    let error: unknown;
    try {
      createQueryProviderAdapter('cloudflare', configFor(fake, { settings }));
    } catch (e) {
      error = e;
    }
    expect(isQueryProviderError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'bad_request', message });
    expect(fake.requests).toHaveLength(0);
  });
});
