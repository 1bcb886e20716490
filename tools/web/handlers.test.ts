import { describe, expect, it } from 'vitest';
import { services, type ToolContext } from '../../src/tool/context.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { webRead, webSearch } from './handlers.ts';
import {
  WEB_READ,
  WEB_SEARCH,
  WebProviderError,
  type WebRead,
  type WebSearch,
} from './web-service.ts';

function ctxWith(read: WebRead['read'], search?: WebSearch['search']): ToolContext {
  return {
    agentId: 'a',
    runId: 'r',
    callId: 'c',
    signal: new AbortController().signal,
    services: services([
      [WEB_READ, { read }],
      [WEB_SEARCH, { search: search ?? (() => Promise.reject(new Error('unused'))) }],
    ]),
  } as unknown as ToolContext;
}

/*
 * The web verbs' own shaping of what a provider answered: a long page clamped with its head and
 * tail and the whole of it as an artifact; each failure an observation with the meter it moved;
 * a spent ceiling reported so that the run ends; the model's own mistakes as invalid input.
 */
describe('the web verbs', () => {
  it('clamps a long page, keeping its head and tail, and stores the whole page', async () => {
    const markdown = `HEAD ${'lorem ipsum '.repeat(4000)} TAIL`;
    const out = await webRead(
      ctxWith(async (_ctx, url) => ({
        provider: 'p',
        calls: 1,
        value: { url, title: 'Long', markdown },
      })),
      { url: 'https://example.com/long' },
    );
    expect(out.text).toMatch(/^# Long\nhttps:\/\/example\.com\/long\n\nHEAD/);
    expect(out.text).toContain('TAIL');
    expect(out.text).toMatch(/bytes omitted; the whole output is artifact [0-9a-f-]{36}/);
    expect(out.text.length).toBeLessThan(markdown.length / 2);
    expect(out.attachments?.[0]).toMatchObject({
      mediaType: 'text/markdown',
      uri: 'https://example.com/long',
    });
    expect(Buffer.from(out.attachments?.[0]?.content ?? []).toString()).toBe(markdown);
    expect(out.usage).toEqual({ providerCalls: { p: 1 } });
    expect(out.data).toMatchObject({ clamped: true, provider: 'p', provider_calls: 1 });
  });

  it('reports a spent ceiling as an error observation that ends the run', async () => {
    const spent = new WebProviderError('quota_exhausted', 'budget exhausted: spent', {
      provider: 'p',
      calls: 0,
      exhausted: true,
    });
    const out = await webSearch(
      ctxWith(
        () => Promise.reject(new Error('unused')),
        () => Promise.reject(spent),
      ),
      { query: 'q' },
    );
    expect(out.isError).toBe(true);
    expect(out.usage).toEqual({ providerCalls: { p: 0 }, exhausted: 'budget exhausted: spent' });
  });

  it('turns a refused URL or filter into invalid input, and a missing provider into an error', async () => {
    const unsafe = await webRead(
      ctxWith(() =>
        Promise.reject(
          new WebProviderError('unsafe_url', 'the host is a loopback address', { calls: 0 }),
        ),
      ),
      { url: 'http://127.0.0.1/' },
    ).catch((e: unknown) => e);
    expect(hasCode(unsafe, 'invalid_tool_input')).toBe(true);
    expect((unsafe as Error).message).toBe('field `url`: the host is a loopback address');
    const none = await webRead(
      ctxWith(() =>
        Promise.reject(
          new WebProviderError('no_provider', 'no web reading provider', { calls: 0 }),
        ),
      ),
      { url: 'https://example.com/' },
    );
    expect(none).toMatchObject({ isError: true, data: { error: 'no_provider' } });
    expect(none.usage).toBeUndefined();
  });
});
