import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest, Tool } from '../../src/model/wire.ts';
import type { ModelCallError } from '../../src/providers/errors.ts';
import {
  openAiCompatibleClient,
  type AttemptInfo,
  type OpenAiCompatibleOptions,
} from '../../src/providers/openai-compatible.ts';
import { manualClock } from '../../src/tool/clock.ts';
import { hasCode } from '../../src/tool/errors.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';

const KEY = `sk-canary-${randomUUID()}`;

let server: FakeChatCompletions;
beforeEach(async () => {
  server = await startFakeChatCompletions();
});
afterEach(async () => {
  await server.close();
});

/** A client on the fake with tiny delays; `attempts` collects what onAttempt saw. */
function clientFor(overrides: Partial<OpenAiCompatibleOptions> = {}) {
  const attempts: AttemptInfo[] = [];
  const client = openAiCompatibleClient({
    baseUrl: server.baseUrl,
    apiKey: async () => KEY,
    retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    onAttempt: (info) => void attempts.push(info),
    ...overrides,
  });
  return { client, attempts };
}

const weather: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function ask(text = 'hello', tools: readonly Tool[] = []): ModelRequest {
  return { model: 'fake-model', messages: [{ role: 'user', content: text }], tools };
}

const call = () => ({ signal: new AbortController().signal });

/** The ModelCallError a call rejected with (failing the test if it resolved or threw else). */
async function rejection(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(hasCode(error, 'model_call_failed')).toBe(true);
  return error as ModelCallError;
}

describe('a completion', () => {
  it('maps a text reply, its finish reason and usage', async () => {
    server.enqueue({
      kind: 'completion',
      content: 'Hi there.',
      usage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 },
    });
    const { client } = clientFor();
    const response = await client.complete(ask(), call());
    expect(response).toEqual({
      message: { role: 'assistant', content: 'Hi there.', toolCalls: [] },
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
  });

  it('keeps tool-call arguments exactly as the model wrote them', async () => {
    const odd =
      '{ "city" :"Zürich" ,\t"note":"naïve ☃ 🚀",  "escaped":"caf\\u00e9\\n", "n": 1.50 }';
    const empty = '';
    server.enqueue({
      kind: 'completion',
      content: null,
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: odd },
        { id: 'call_b', name: 'get_weather', arguments: empty },
      ],
    });
    const { client } = clientFor();
    const response = await client.complete(ask('weather?', [weather]), call());
    expect(response.finishReason).toBe('tool_calls');
    expect(response.message.content).toBe('');
    expect(response.message.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: odd },
      { id: 'call_b', name: 'get_weather', arguments: empty },
    ]);
    expect(Buffer.from(response.message.toolCalls[0]?.arguments ?? '')).toEqual(Buffer.from(odd));
  });

  it('reads an unknown finish reason as other and missing usage as zeros', async () => {
    server.enqueue({ kind: 'completion', content: 'x', finishReason: 'eos_token', usage: null });
    const { client } = clientFor();
    const response = await client.complete(ask(), call());
    expect(response.finishReason).toBe('other');
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });

  it.each([
    ['no choices', '{"id":"x","object":"chat.completion","choices":[]}', 'no choices'],
    ['a body that is not JSON', '{"id":', 'not valid JSON'],
    ['a 200 that is not JSON at all', '<html>oops</html>', 'not a JSON object'],
    [
      'arguments sent as an object',
      JSON.stringify({
        choices: [
          {
            message: {
              role: 'assistant',
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: {} } }],
            },
          },
        ],
      }),
      'tool_calls[0].function.arguments',
    ],
    [
      'a tool call without an id',
      JSON.stringify({
        choices: [
          {
            message: {
              role: 'assistant',
              tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
          },
        ],
      }),
      'tool_calls[0].id',
    ],
  ])('refuses %s as invalid_response, without retrying', async (_, body, reason) => {
    const contentType = body.startsWith('<') ? 'text/html' : 'application/json';
    server.enqueue({ kind: 'raw', body, contentType }, { kind: 'completion', content: 'unused' });
    const { client } = clientFor();
    const error = await rejection(client.complete(ask(), call()));
    expect(error.failure).toMatchObject({ code: 'invalid_response', retryable: false });
    expect(error.message).toContain(reason);
    expect(server.requests).toHaveLength(1);
  });
});

describe('the request sent', () => {
  it('projects every message kind and the tools onto the Chat Completions body', async () => {
    const raw = '{"city" : "Zürich"}';
    server.enqueue({ kind: 'completion', content: 'done' });
    const { client } = clientFor();
    await client.complete(
      {
        model: 'vendor/some-model',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Zürich?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: raw }],
          },
          { role: 'tool', toolCallId: 'call_1', content: '{"temp_c":21}' },
          { role: 'assistant', content: 'It is 21 °C.', toolCalls: [] },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [weather],
      },
      call(),
    );
    const sent = server.requests[0];
    expect(sent?.json).toEqual({
      model: 'vendor/some-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Zürich?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: raw } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
        { role: 'assistant', content: 'It is 21 °C.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: weather.description,
            parameters: weather.parameters,
          },
        },
      ],
    });
    // The arguments travel as the same JSON string, not a re-serialized object.
    expect(sent?.body).toContain(`"arguments":${JSON.stringify(raw)}`);
    expect(sent?.body).not.toContain('tool_choice');
  });

  it('sends no tools and no tool_choice key at all when the request offers no tools', async () => {
    server.enqueue({ kind: 'completion', content: 'final answer' });
    const { client } = clientFor();
    await client.complete(ask('answer now'), call());
    const sent = server.requests[0];
    expect(Object.keys(sent?.json as object).sort()).toEqual(['messages', 'model']);
    expect(sent?.body).not.toContain('"tools"');
    expect(sent?.body).not.toContain('tool_choice');
  });

  it("uses the client's model when the request names none, and refuses when neither does", async () => {
    server.enqueue({ kind: 'completion', content: 'ok' });
    await clientFor({ model: 'default-model' }).client.complete({ ...ask(), model: '' }, call());
    expect(server.requests[0]?.json).toMatchObject({ model: 'default-model' });

    const error = await rejection(clientFor().client.complete({ ...ask(), model: '' }, call()));
    expect(error.failure).toMatchObject({ code: 'bad_request', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('is configured by its options only, never by OPENAI_* environment variables', async () => {
    const planted: Record<string, string> = {
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_ORG_ID: 'org-from-env',
      OPENAI_PROJECT_ID: 'proj-from-env',
      OPENAI_CUSTOM_HEADERS: 'X-From-Env: leaked',
    };
    const saved = Object.keys(planted).map((name) => [name, process.env[name]] as const);
    Object.assign(process.env, planted);
    try {
      server.enqueue({ kind: 'completion', content: 'ok' });
      await clientFor().client.complete(ask(), call());
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const headers = server.requests[0]?.headers ?? {};
    expect(headers.authorization).toBe(`Bearer ${KEY}`);
    expect(headers['x-from-env']).toBeUndefined();
    expect(headers['openai-organization']).toBeUndefined();
    expect(headers['openai-project']).toBeUndefined();
  });
});

describe('retries', () => {
  it('honours Retry-After on a 429, then succeeds on the second attempt', async () => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'Rate limit reached', retryAfter: '1' },
      { kind: 'completion', content: 'after the wait' },
    );
    const { client, attempts } = clientFor({
      retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 2_000 },
    });
    const response = await client.complete(ask(), call());
    expect(response.message.content).toBe('after the wait');
    expect(server.requests).toHaveLength(2);
    expect(attempts.map((a) => [a.attempt, a.delayMs, a.status])).toEqual([
      [1, 0, undefined],
      [2, 1_000, 429],
    ]);
    expect(attempts[1]?.previous).toMatchObject({ code: 'rate_limited', retryable: true });
  });

  it.each([
    ['delta-seconds', '30'],
    ['an HTTP date', new Date(Date.now() + 3_600_000).toUTCString()],
  ])('caps a Retry-After given as %s at maxDelayMs', async (_, retryAfter) => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'slow down', retryAfter },
      { kind: 'completion', content: 'ok' },
    );
    // baseDelayMs 1 keeps jittered backoff at 0–1 ms, so 25 can only come from the header.
    const { client, attempts } = clientFor({
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 25 },
    });
    await client.complete(ask(), call());
    expect(attempts.map((a) => a.delayMs)).toEqual([0, 25]);
  });

  it('measures a Retry-After HTTP date against its clock, and the wait shrinks as the clock moves', async () => {
    const clock = manualClock(new Date('2030-01-01T00:00:00Z'));
    const retryAt = new Date(clock.now().getTime() + 45_000).toUTCString();
    const { client, attempts } = clientFor({
      clock,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 60_000 },
    });
    // Refusing the retry in the attempt listener (which runs before the wait) reads the decided
    // delay without waiting it out.
    const refused = new Error('refused by the test');
    const refuseRetry = {
      onAttempt: (info: AttemptInfo) => {
        if (info.attempt > 1) throw refused;
      },
    };
    const askOnce = async (): Promise<unknown> => {
      server.enqueue({ kind: 'error', status: 429, message: 'slow down', retryAfter: retryAt });
      return client.complete(ask(), { ...call(), ...refuseRetry }).catch((e: unknown) => e);
    };
    expect(await askOnce()).toBe(refused);
    clock.advance(40_000);
    expect(await askOnce()).toBe(refused);
    clock.advance(10_000);
    server.enqueue(
      { kind: 'error', status: 429, message: 'slow down', retryAfter: retryAt },
      { kind: 'completion', content: 'ok' },
    );
    const response = await client.complete(ask(), call());
    expect(response.message.content).toBe('ok');
    expect(attempts.filter((a) => a.attempt === 2).map((a) => a.delayMs)).toEqual([
      45_000, 5_000, 0,
    ]);
  });

  it('gives up after maxAttempts 5xx answers with server_error and the provider message', async () => {
    const message = 'The server had an error while processing your request. Sorry about that!';
    server.enqueue(
      ...Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 500, message })),
    );
    const { client, attempts } = clientFor({
      retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 8 },
    });
    const error = await rejection(client.complete(ask(), call()));
    expect(error.message).toBe(message);
    expect(error.failure).toEqual({ code: 'server_error', message, status: 500, retryable: true });
    expect(error.toJSON()).toMatchObject({ code: 'model_call_failed', data: { attempts: 3 } });
    expect(server.requests).toHaveLength(3);
    expect(server.pending).toBe(1);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    for (const { delayMs } of attempts) expect(delayMs).toBeLessThanOrEqual(8);
  });

  it.each([
    [400, 'bad_request'],
    [401, 'auth'],
    [403, 'auth'],
    [404, 'bad_request'],
    [422, 'bad_request'],
  ])('does not retry a %i (%s)', async (status, code) => {
    server.enqueue(
      { kind: 'error', status, message: `refused with ${status}` },
      { kind: 'completion', content: 'must not be reached' },
    );
    const { client } = clientFor();
    const error = await rejection(client.complete(ask(), call()));
    expect(error.failure).toEqual({
      code,
      message: `refused with ${status}`,
      status,
      retryable: false,
    });
    expect(server.requests).toHaveLength(1);
    expect(server.pending).toBe(1);
  });

  it('retries a dropped connection', async () => {
    server.enqueue({ kind: 'drop' }, { kind: 'completion', content: 'reconnected' });
    const { client, attempts } = clientFor();
    const response = await client.complete(ask(), call());
    expect(response.message.content).toBe('reconnected');
    expect(server.requests).toHaveLength(2);
    expect(attempts[1]?.previous).toMatchObject({ code: 'connection', retryable: true });
  });

  it('reports connection failure once every attempt was dropped', async () => {
    server.enqueue({ kind: 'drop' }, { kind: 'drop' });
    const { client } = clientFor({ retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    const error = await rejection(client.complete(ask(), call()));
    expect(error.failure).toMatchObject({ code: 'connection', retryable: true });
    expect(error.failure.status).toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('fails an attempt that outlives timeoutMs as timeout', async () => {
    server.enqueue({ kind: 'hang' }, { kind: 'hang' });
    const { client } = clientFor({
      timeoutMs: 50,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const error = await rejection(client.complete(ask(), call()));
    expect(error.failure).toMatchObject({ code: 'timeout', retryable: true });
    expect(server.requests).toHaveLength(2);
  });

  it('lets the caller refuse an attempt from onAttempt, sending nothing more', async () => {
    server.enqueue({ kind: 'error', status: 503, message: 'overloaded' });
    const budget = new Error('run budget: model attempts exhausted');
    const client = openAiCompatibleClient({ baseUrl: server.baseUrl, apiKey: async () => KEY });
    const refusal = client.complete(ask(), {
      ...call(),
      onAttempt: ({ attempt }) => {
        if (attempt > 1) throw budget;
      },
    });
    await expect(refusal).rejects.toBe(budget);
    expect(server.requests).toHaveLength(1);
  });
});

describe('abort', () => {
  it('rejects with the signal reason while a request is in flight', async () => {
    server.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const { client } = clientFor();
    const pending = client.complete(ask(), { signal: controller.signal });
    await server.waitForRequests(1);
    const reason = new Error('turn cancelled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects while waiting out a backoff, without sending the retry', async () => {
    server.enqueue({ kind: 'error', status: 429, message: 'wait', retryAfter: '60' });
    const controller = new AbortController();
    const { client } = clientFor({
      retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 60_000 },
      onAttempt: ({ delayMs }) => {
        if (delayMs > 0) queueMicrotask(() => controller.abort());
      },
    });
    const outcome = await client
      .complete(ask(), { signal: controller.signal })
      .catch((e: unknown) => e);
    expect((outcome as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { client } = clientFor();
    const outcome = await client
      .complete(ask(), { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect((outcome as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });
});

describe('the API key', () => {
  function assertNowhere(...values: unknown[]): void {
    for (const value of values) {
      const forms = [
        String(value),
        JSON.stringify(value),
        inspect(value, { depth: Infinity, showHidden: true }),
      ];
      for (const form of forms) {
        expect(form).not.toContain(KEY);
        expect(form).not.toContain(KEY.slice('sk-canary-'.length));
      }
    }
  }

  it('is sent as a bearer token and appears in no error, even when the server echoes it', async () => {
    const masked = `${KEY.slice(0, 7)}****${KEY.slice(-4)}`;
    server.enqueue({
      kind: 'error',
      status: 401,
      message: `Incorrect API key provided: ${KEY} (${masked}); header was Bearer ${KEY}`,
      code: 'invalid_api_key',
    });
    const { client, attempts } = clientFor();
    const error = await rejection(client.complete(ask(), call()));
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expect(error.message).not.toContain(masked);
    assertNowhere(error, error.stack, error.toJSON(), error.failure, client, attempts);
  });

  it('is removed from retried failures too, and fetched again for every attempt', async () => {
    const key = `canary-${randomUUID()}`;
    let fetched = 0;
    server.enqueue(
      { kind: 'error', status: 500, message: `upstream rejected ${key}` },
      { kind: 'error', status: 500, message: `upstream rejected ${encodeURIComponent(key)}` },
    );
    const { client, attempts } = clientFor({
      apiKey: async () => {
        fetched += 1;
        return key;
      },
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const error = await rejection(client.complete(ask(), call()));
    expect(fetched).toBe(2);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${key}`,
      `Bearer ${key}`,
    ]);
    for (const value of [error, error.toJSON(), attempts, client]) {
      expect(inspect(value, { depth: Infinity, showHidden: true })).not.toContain(key);
      expect(JSON.stringify(value) ?? '').not.toContain(key);
    }
  });

  it('refuses an empty key without sending anything', async () => {
    const { client } = clientFor({ apiKey: async () => '' });
    const error = await rejection(client.complete(ask(), call()));
    expect(error.failure).toMatchObject({ code: 'auth', retryable: false });
    expect(server.requests).toHaveLength(0);
  });
});

describe('a streamed completion (onText given)', () => {
  /** The call's options with an onText that records every (text, attempt) it is told. */
  function streamed() {
    const seen: { text: string; attempt: number }[] = [];
    return {
      seen,
      options: {
        signal: new AbortController().signal,
        onText: (text: string, attempt: number) => void seen.push({ text, attempt }),
      },
    };
  }

  it('asks for a stream with usage, reports the text as it grows, and resolves to the same response', async () => {
    const odd = '{ "city" :"Zürich" }';
    const reply = {
      kind: 'completion' as const,
      content: 'Let me look that up.',
      toolCalls: [{ id: 'call_a', name: 'get_weather', arguments: odd }],
      usage: { promptTokens: 12, completionTokens: 7, totalTokens: 19 },
    };
    server.enqueue(reply, reply);
    const { client } = clientFor();
    const plain = await client.complete(ask('weather?', [weather]), call());
    const { seen, options } = streamed();
    const response = await client.complete(ask('weather?', [weather]), options);

    expect(response).toEqual(plain);
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 7, totalTokens: 19 });
    expect(response.message.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: odd },
    ]);
    const body = server.requests[1]?.json as Record<string, unknown>;
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.requests[0]?.json).not.toHaveProperty('stream');
    // Each report is the text so far: it only grows, and ends as the whole.
    expect(seen.map((s) => s.text)).toEqual([
      '',
      'Let ',
      'Let me ',
      'Let me look ',
      'Let me look that ',
      'Let me look that up.',
    ]);
    expect(seen.every((s) => s.attempt === 1)).toBe(true);
  });

  it('starts the text again when a stream drops midway and the retry succeeds', async () => {
    server.enqueue(
      { kind: 'completion', content: 'one two three four', dropAfterPieces: 2 },
      { kind: 'completion', content: 'five six' },
    );
    const { client, attempts } = clientFor();
    const { seen, options } = streamed();
    const response = await client.complete(ask(), options);
    expect(response.message.content).toBe('five six');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts[1]?.previous).toMatchObject({ code: 'connection', retryable: true });
    expect(seen).toContainEqual({ text: 'one two ', attempt: 1 });
    const second = seen.filter((s) => s.attempt === 2).map((s) => s.text);
    expect(second).toEqual(['', 'five ', 'five six']);
  });

  it('fails a stream that ends before its finish reason as invalid_response, quoting none of the text', async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    server.enqueue({
      kind: 'raw',
      contentType: 'text/event-stream',
      body: chunk({ role: 'assistant', content: 'secret-ish words' }) + 'data: [DONE]\n\n',
    });
    const { client } = clientFor();
    const { options } = streamed();
    const error = await rejection(client.complete(ask(), options));
    expect(error.failure).toMatchObject({ code: 'invalid_response', retryable: false });
    expect(error.message).toContain('the streamed response is incomplete');
    expect(error.message).not.toContain('secret-ish');
  });

  it('fails a stream whose chunk is not JSON as invalid_response, without retrying', async () => {
    server.enqueue({
      kind: 'raw',
      contentType: 'text/event-stream',
      body: 'data: {"id": "c1", "choices": [\n\n',
    });
    const { client, attempts } = clientFor();
    const error = await rejection(client.complete(ask(), streamed().options));
    expect(error.failure).toMatchObject({
      code: 'invalid_response',
      message: 'a streamed chunk is not valid JSON',
    });
    expect(attempts).toHaveLength(1);
  });

  it('fails a stream that sends nothing at all as invalid_response', async () => {
    server.enqueue({ kind: 'raw', contentType: 'text/event-stream', body: 'data: [DONE]\n\n' });
    const { client } = clientFor();
    const error = await rejection(client.complete(ask(), streamed().options));
    expect(error.failure).toMatchObject({ code: 'invalid_response' });
  });

  it('reads a streamed request answered with plain JSON as the whole completion', async () => {
    // Several self-hosted servers and proxies ignore `stream: true` and answer application/json.
    const completion = {
      id: 'chatcmpl-plain',
      object: 'chat.completion',
      created: 0,
      model: 'fake-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_p',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    };
    server.enqueue({
      kind: 'raw',
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify(completion),
    });
    const { client, attempts } = clientFor();
    const response = await client.complete(ask('weather?', [weather]), streamed().options);
    expect(server.requests[0]?.json).toMatchObject({ stream: true });
    expect(response.message.toolCalls).toEqual([
      { id: 'call_p', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    ]);
    expect(response.usage).toEqual({ inputTokens: 9, outputTokens: 4, totalTokens: 13 });
    expect(attempts).toHaveLength(1);
  });

  it('fails a streamed request answered with neither a stream nor JSON as invalid_response', async () => {
    server.enqueue({
      kind: 'raw',
      contentType: 'text/html',
      body: '<html>sk-leaked-looking-page</html>',
    });
    const { client, attempts } = clientFor();
    const error = await rejection(client.complete(ask(), streamed().options));
    expect(error.failure).toMatchObject({
      code: 'invalid_response',
      retryable: false,
      message: 'the provider answered a streamed request with content-type text/html',
    });
    expect(error.message).not.toContain('leaked');
    expect(attempts).toHaveLength(1);
  });

  it('fails a streamed request answered with JSON that is not a completion as invalid_response', async () => {
    server.enqueue({ kind: 'raw', contentType: 'application/json', body: '{"hello":"world"}' });
    const { client } = clientFor();
    const error = await rejection(client.complete(ask(), streamed().options));
    expect(error.failure).toMatchObject({ code: 'invalid_response', retryable: false });
    expect(error.message).not.toContain('world');
  });

  it('retries a 429 refused before any stream began, as a plain call does', async () => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'slow down', retryAfter: '0' },
      { kind: 'completion', content: 'ok' },
    );
    const { client, attempts } = clientFor();
    const response = await client.complete(ask(), streamed().options);
    expect(response.message.content).toBe('ok');
    expect(attempts.map((a) => a.status)).toEqual([undefined, 429]);
  });

  it('rejects with the signal reason when aborted mid-stream', async () => {
    server.enqueue({ kind: 'completion', content: 'a b c d e f', pauseMs: 200 });
    const { client } = clientFor();
    const controller = new AbortController();
    const reason = new Error('stop now');
    const pending = client.complete(ask(), {
      signal: controller.signal,
      onText: (text) => {
        if (text.startsWith('a b')) controller.abort(reason);
      },
    });
    await expect(pending).rejects.toBe(reason);
  });
});

describe('the fake server', () => {
  it('lists models and answers an unscripted completion with a loud 500', async () => {
    const models = await fetch(`${server.baseUrl}/models`).then((r) => r.json());
    expect(models).toEqual({
      object: 'list',
      data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }],
    });
    const error = await rejection(
      clientFor({ retry: { maxAttempts: 1 } }).client.complete(ask(), call()),
    );
    expect(error.message).toContain('no reply was enqueued');
  });
});

describe('clients of one provider', () => {
  it('each send their own key, though they share the SDK underneath', async () => {
    const keys = [`sk-first-${randomUUID()}`, `sk-second-${randomUUID()}`];
    for (const key of keys) {
      server.enqueue({ kind: 'completion', content: 'ok' });
      const client = openAiCompatibleClient({ baseUrl: server.baseUrl, apiKey: async () => key });
      await client.complete(ask(), call());
    }
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(
      keys.map((key) => `Bearer ${key}`),
    );
  });
});
