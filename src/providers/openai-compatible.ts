import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAI,
  OpenAIError,
} from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import type { CompleteOptions, ModelClient, ModelFailure } from '../model/client.ts';
import type { ModelRequest, ModelResponse } from '../model/wire.ts';
import { systemClock, type Clock } from '../tool/clock.ts';
import { fromChatCompletion, toChatCompletionsBody } from './chat-completions-wire.ts';
import { ModelCallError, redactCredentials } from './errors.ts';
import { retryAfterMs, retrying, retryPolicy, type RetryPolicy } from '../tool/retry-policy.ts';

/** Reported once before every HTTP attempt, so a caller can count attempts against its budget. */
export interface AttemptInfo {
  /** 1 for the first attempt of this call. */
  readonly attempt: number;
  /** How long the client waits before sending this attempt (0 for the first). */
  readonly delayMs: number;
  /** The HTTP status of the failed attempt this one retries, when it had one. */
  readonly status?: number;
  /** Why the attempt this one retries failed (credentials already removed). */
  readonly previous?: ModelFailure;
}

/**
 * Called before every attempt, before the wait. Throwing refuses the attempt: the call rejects
 * with what was thrown and nothing more is sent. That is how a per-run cap is enforced.
 */
export type AttemptListener = (info: AttemptInfo) => void;

/** How to reach one OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, Ollama, …). */
export interface OpenAiCompatibleOptions {
  /** The API root, ending before `/chat/completions` (e.g. `https://openrouter.ai/api/v1`). */
  readonly baseUrl: string;
  /** The model used when a request names none. */
  readonly model?: string;
  /**
   * Returns the key at the moment of use; called once per attempt and never kept. A rejection
   * propagates unchanged: a key that cannot be decrypted is the caller's failure, not the model's.
   */
  readonly apiKey: () => Promise<string>;
  /** Attempts per call and their backoff (default: 4 attempts, 500 ms base, 30 s cap). */
  readonly retry?: Partial<RetryPolicy>;
  /** Per attempt; a slow attempt fails as `timeout` and is retried. Default 5 minutes. */
  readonly timeoutMs?: number;
  /** A fetch implementation to send requests with (tests, proxies). */
  readonly fetch?: typeof globalThis.fetch;
  /** Sees every attempt of every call made through this client. */
  readonly onAttempt?: AttemptListener;
  /** What a Retry-After HTTP date is measured against; the system clock when omitted. */
  readonly clock?: Clock;
}

/**
 * Per-call options: the seam's `signal` and `onText` (given, the call streams), plus a listener
 * for this call's attempts only.
 */
export interface OpenAiCompatibleCallOptions extends CompleteOptions {
  readonly onAttempt?: AttemptListener;
}

/** A {@link ModelClient} that also accepts a per-call attempt listener. */
export interface OpenAiCompatibleClient extends ModelClient {
  complete(request: ModelRequest, options: OpenAiCompatibleCallOptions): Promise<ModelResponse>;
}

/** Long non-streamed completions from reasoning models routinely take minutes. */
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
/** The SDK insists on a key at construction; the real one is sent per request, never this. */
const NO_KEY_HELD = 'mesh-sends-the-key-per-request';
/**
 * The only request headers that leave the process. The SDK adds headers of its own, including
 * any in OPENAI_CUSTOM_HEADERS; a provider is never configured through process environment.
 */
const SENT_HEADERS = ['accept', 'authorization', 'content-type', 'user-agent'] as const;
/** A provider's error page can be large; a persisted failure message does not need all of it. */
const MAX_MESSAGE_CHARS = 1_000;

/**
 * The SDK's own assembler of a streamed completion, fed the chunks already parsed from the
 * response: handed a client whose `create` answers with this stream, it iterates it once
 * (re-serializing it through `toReadableStream()` parsed every chunk twice).
 */
function assembled(
  data: AsyncIterable<ChatCompletionChunk>,
  body: ChatCompletionCreateParamsNonStreaming,
  signal: AbortSignal,
): ChatCompletionStream {
  const answered = { chat: { completions: { create: () => Promise.resolve(data) } } };
  return ChatCompletionStream.createChatCompletion(
    answered as never,
    { ...body, stream: true },
    { signal },
  );
}

/** The SDK clients of the providers in use, by API root and timeout: see {@link sdkFor}. */
const SDKS = new Map<string, OpenAI>();
/** At most this many are kept; the oldest is let go first. */
const MAX_SDKS = 64;

/**
 * The SDK client for `baseUrl`: shared by every client of the provider that sends with the global
 * `fetch`, since it holds no key (the key goes with each request) and costs a few dozen objects to
 * build, once a turn otherwise. One given its own `fetch` (a test's) gets its own.
 */
function sdkFor(baseUrl: string, timeoutMs: number, fetch: typeof globalThis.fetch | undefined) {
  const key = `${timeoutMs} ${baseUrl}`;
  const shared = fetch === undefined ? SDKS.get(key) : undefined;
  if (shared !== undefined) return shared;
  // Every option the SDK would otherwise read from OPENAI_* environment variables is explicit.
  const sdk = new OpenAI({
    baseURL: baseUrl,
    apiKey: NO_KEY_HELD,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    timeout: timeoutMs,
    logLevel: 'off',
    // The global fetch as it is at the call (a test may have replaced it since).
    fetch: (input, init) =>
      (fetch ?? globalThis.fetch)(input, { ...init, headers: onlySentHeaders(init?.headers) }),
  });
  if (fetch === undefined) {
    if (SDKS.size >= MAX_SDKS) SDKS.delete(SDKS.keys().next().value as string);
    SDKS.set(key, sdk);
  }
  return sdk;
}

/**
 * A Chat Completions client over the official `openai` package. Retries are ours (the SDK's are
 * off): 429, 5xx, timeouts and dropped connections are retried with full-jitter backoff, honouring
 * Retry-After up to `maxDelayMs`; anything else fails at once. Failures throw
 * {@link ModelCallError}; an abort rejects with the signal's reason. The key is fetched per attempt
 * and lives only in that attempt's request.
 */
export function openAiCompatibleClient(options: OpenAiCompatibleOptions): OpenAiCompatibleClient {
  const policy = retryPolicy(options.retry);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  const sdk = sdkFor(options.baseUrl, timeoutMs, options.fetch);

  async function attemptOnce(
    body: ChatCompletionCreateParamsNonStreaming,
    signal: AbortSignal,
    attempt: number,
    onText: CompleteOptions['onText'],
  ): Promise<AttemptOutcome> {
    const key = await options.apiKey();
    if (key === '') {
      const failure: ModelFailure = {
        code: 'auth',
        message: 'the API key is empty',
        retryable: false,
      };
      throw new ModelCallError(failure, attempt - 1);
    }
    const request = { signal, headers: { Authorization: `Bearer ${key}` } };
    try {
      if (onText === undefined)
        return { kind: 'body', json: await sdk.chat.completions.create(body, request) };
      // Streamed: the SDK assembles the chunks into the same chat.completion a plain call
      // returns (usage comes in the last chunk when asked for), so parsing is one path.
      onText('', attempt);
      const { data, response } = await sdk.chat.completions
        .create({ ...body, stream: true, stream_options: { include_usage: true } }, request)
        .withResponse();
      const type = mediaType(response.headers.get('content-type'));
      // Several self-hosted servers and proxies ignore `stream` and answer with the whole
      // completion: that is an answer, read as a plain call's. Anything else is not a stream.
      if (type === 'application/json') return { kind: 'body', json: await response.json() };
      if (type !== '' && type !== 'text/event-stream') {
        await response.body?.cancel();
        const message = `the provider answered a streamed request with content-type ${oneToken(type)}`;
        return failed({ code: 'invalid_response', message, retryable: false });
      }
      const streamed = assembled(data, body, signal);
      streamed.on('content', (_delta, snapshot) => onText(snapshot, attempt));
      return { kind: 'body', json: await streamed.finalChatCompletion() };
    } catch (error) {
      signal.throwIfAborted();
      return classify(error, { timeoutMs, clock }, (text) => redactCredentials(text, [key]));
    }
  }

  async function complete(
    request: ModelRequest,
    { signal, onAttempt, onText }: OpenAiCompatibleCallOptions,
  ): Promise<ModelResponse> {
    const model = request.model !== '' ? request.model : options.model;
    if (model === undefined || model === '') {
      const message = 'neither the request nor the client names a model';
      throw new ModelCallError({ code: 'bad_request', message, retryable: false }, 0);
    }
    const body = toChatCompletionsBody(request, model);
    const { json, attempt } = await retrying(
      async (attempt) => {
        const outcome = await attemptOnce(body, signal, attempt, onText);
        if (outcome.kind === 'failed') throw new AttemptFailed(outcome, attempt);
        return { json: outcome.json, attempt };
      },
      {
        policy,
        signal,
        onAttempt: (attempt, delayMs, previous) => {
          const info: AttemptInfo = {
            attempt,
            delayMs,
            ...previousOf((previous as AttemptFailed | undefined)?.outcome),
          };
          options.onAttempt?.(info);
          onAttempt?.(info);
        },
        judge: (error) => {
          if (!(error instanceof AttemptFailed) || !error.outcome.failure.retryable)
            return undefined;
          const after = error.outcome.retryAfterMs;
          return after === undefined ? {} : { retryAfterMs: after };
        },
      },
    ).catch((error: unknown) => {
      throw error instanceof AttemptFailed
        ? new ModelCallError(error.outcome.failure, error.attempt)
        : error;
    });
    const parsed = fromChatCompletion(json);
    if (parsed.kind === 'completion') return parsed.response;
    const failure: ModelFailure = {
      code: 'invalid_response',
      message: parsed.reason,
      retryable: false,
    };
    throw new ModelCallError(failure, attempt);
  }

  return Object.freeze({ kind: 'openai_compatible', complete });
}

/** An attempt that failed, carried through the retry loop to the final ModelCallError. */
class AttemptFailed extends Error {
  constructor(
    readonly outcome: Failed,
    readonly attempt: number,
  ) {
    super(outcome.failure.message);
  }
}

interface Failed {
  readonly kind: 'failed';
  readonly failure: ModelFailure;
  readonly retryAfterMs?: number;
}
type AttemptOutcome = { readonly kind: 'body'; readonly json: unknown } | Failed;

function failed(failure: ModelFailure): Failed {
  return { kind: 'failed', failure };
}

function previousOf(previous: Failed | undefined): Pick<AttemptInfo, 'status' | 'previous'> {
  if (previous === undefined) return {};
  const { status } = previous.failure;
  return status === undefined
    ? { previous: previous.failure }
    : { status, previous: previous.failure };
}

/** Turns whatever the SDK threw into a failure value; only our own bugs are rethrown. */
function classify(
  error: unknown,
  { timeoutMs, clock }: { readonly timeoutMs: number; readonly clock: Clock },
  redact: (text: string) => string,
): Failed {
  if (error instanceof APIUserAbortError) {
    // Aborted by something other than the caller's signal: treat it as a lost connection.
    return failed({ code: 'connection', message: 'the request was aborted', retryable: true });
  }
  if (error instanceof APIConnectionTimeoutError) {
    const message = `the provider did not answer within ${timeoutMs} ms`;
    return failed({ code: 'timeout', message, retryable: true });
  }
  if (error instanceof APIConnectionError) {
    const message = redact(`connection to the provider failed: ${causeChain(error)}`);
    return failed({ code: 'connection', message, retryable: true });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const apiError = error as APIError<number, Headers | undefined>;
    const message = redact(providerMessage(apiError)).slice(0, MAX_MESSAGE_CHARS);
    const after = retryAfterMs(apiError.headers, clock);
    const failure = statusFailure(apiError.status, message);
    return after === undefined || !failure.retryable
      ? failed(failure)
      : { kind: 'failed', failure, retryAfterMs: after };
  }
  if (error instanceof SyntaxError) {
    const message = 'the response body is not valid JSON';
    return failed({ code: 'invalid_response', message, retryable: false });
  }
  if (error instanceof OpenAIError && error.cause instanceof Error) {
    // A streamed call wraps what broke it: a chunk that is not JSON, or the connection lost
    // midway (the attempt is retried from the start, as a dropped plain call is).
    if (error.cause instanceof SyntaxError) {
      const message = 'a streamed chunk is not valid JSON';
      return failed({ code: 'invalid_response', message, retryable: false });
    }
    const message = redact(`the stream from the provider broke: ${error.cause.message}`);
    return failed({ code: 'connection', message, retryable: true });
  }
  if (error instanceof OpenAIError) {
    // A stream that ended short of a whole completion (no chunks, no finish reason, a call
    // without its name). Only the SDK's first line: later lines quote the model's output.
    const first = (error.message.split('\n')[0] ?? '').slice(0, MAX_MESSAGE_CHARS);
    const message = `the streamed response is incomplete: ${first}`;
    return failed({ code: 'invalid_response', message, retryable: false });
  }
  throw error;
}

function statusFailure(status: number, message: string): ModelFailure {
  if (status === 429) return { code: 'rate_limited', message, status, retryable: true };
  if (status >= 500) return { code: 'server_error', message, status, retryable: true };
  if (status === 408) return { code: 'timeout', message, status, retryable: true };
  if (status === 401 || status === 403) return { code: 'auth', message, status, retryable: false };
  return { code: 'bad_request', message, status, retryable: false };
}

/** The provider's own words: `error.message` in an OpenAI-shaped body, else what the SDK saw. */
function providerMessage(error: APIError<number, Headers | undefined>): string {
  const body: unknown = error.error;
  if (typeof body === 'string' && body.trim() !== '') return body;
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const { message } = body;
    if (typeof message === 'string' && message.trim() !== '') return message;
  }
  const prefix = `${error.status} `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** "fetch failed: other side closed": the SDK's own message says only "Connection error." */
function causeChain(error: Error): string {
  const parts: string[] = [];
  let cause: unknown = error.cause;
  while (cause instanceof Error && parts.length < 3) {
    parts.push(cause.message);
    cause = cause.cause;
  }
  return parts.length > 0 ? parts.join(': ') : error.message;
}

/** `text/event-stream; charset=utf-8` → `text/event-stream`; '' when the header is absent. */
function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** A header value quoted in a message: one short token, never the provider's free text. */
function oneToken(value: string): string {
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(value) && value.length <= 80
    ? value
    : '(not a media type)';
}

function onlySentHeaders(given: RequestInit['headers']): Headers {
  const from = new Headers(given);
  const headers = new Headers();
  for (const name of SENT_HEADERS) {
    const value = from.get(name);
    if (value !== null) headers.set(name, value);
  }
  return headers;
}
