import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool call as the fake model sends it; `arguments` goes on the wire exactly as given. */
export interface FakeToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/**
 * One scripted answer to one `POST …/chat/completions`, consumed in order.
 * - `completion`: a 200 `chat.completion`. `content` defaults to '' (null is sent as null),
 *   `finishReason` to `tool_calls` when there are calls and `stop` otherwise, `usage` to zeros
 *   (null leaves `usage` out). A request with `stream: true` gets the same completion as
 *   `chat.completion.chunk` server-sent events, as OpenAI sends them: the role, the content in
 *   pieces, each tool call, the finish reason, the usage (when `stream_options.include_usage`),
 *   then `data: [DONE]`.
 * - `error`: an OpenAI-shaped error, `{error: {message, type, code}}`, with optional Retry-After.
 * - `raw`: any status and body text, for answers no honest server gives.
 * - `drop`: the socket is destroyed after the request is read.
 * - `hang`: no answer until the client gives up or the server closes.
 */
export type FakeReply =
  | {
      readonly kind: 'completion';
      readonly content?: string | null;
      readonly toolCalls?: readonly FakeToolCall[];
      readonly finishReason?: string;
      readonly usage?: FakeUsage | null;
      /**
       * A streamed request (`stream: true`) gets the content in these pieces, one chunk each
       * (default: one piece per word); `pauseMs` apart when given.
       */
      readonly pieces?: readonly string[];
      readonly pauseMs?: number;
      /** Streamed: the connection is dropped after this many content chunks. */
      readonly dropAfterPieces?: number;
      /** Streamed: every piece but the last is sent, then this is awaited before the rest. */
      readonly holdBeforeLast?: Promise<unknown>;
    }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message: string;
      readonly type?: string;
      readonly code?: string | null;
      /** Sent verbatim as the Retry-After header (seconds or an HTTP date). */
      readonly retryAfter?: string;
    }
  | {
      readonly kind: 'raw';
      readonly status?: number;
      readonly body: string;
      readonly contentType?: string;
    }
  | { readonly kind: 'drop' }
  | { readonly kind: 'hang' }
  /** Holds the request until `gate` settles, then answers with `reply` (a turn a test paces). */
  | { readonly kind: 'after'; readonly gate: Promise<unknown>; readonly reply: FakeReply };

/** Token counts as the wire names them, in our casing. */
export interface FakeUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}

/** Everything the server received for one request, byte for byte. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query as sent, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Header names lower-cased, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  /** The exact body bytes. */
  readonly bytes: Buffer;
  /** The body decoded as UTF-8. */
  readonly body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** A running fake. Replies are consumed one per completion request, in the order enqueued. */
export interface FakeChatCompletions {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `url + '/v1'`: what a client takes as its base URL. */
  readonly baseUrl: string;
  /** Every request received so far, in arrival order (completions, model lists, strays). */
  readonly requests: readonly RecordedRequest[];
  /** Replies enqueued and not yet used. */
  readonly pending: number;
  enqueue(...replies: readonly FakeReply[]): void;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

const COMPLETION_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);

/**
 * Starts a loopback HTTP server speaking the Chat Completions wire format, scripted per test.
 * A completion request with nothing enqueued goes to `respond`, or without one gets a 500 naming
 * the problem, so a test that under-scripts fails loudly instead of hanging. `GET /v1/models` lists `models`.
 */
export async function startFakeChatCompletions(
  options: {
    readonly models?: readonly string[];
    /**
     * Answers a completion request when nothing is enqueued: a model that reacts to what the
     * request carries (its messages, the tools offered) instead of a fixed script.
     */
    readonly respond?: (request: unknown) => FakeReply;
  } = {},
): Promise<FakeChatCompletions> {
  const models = options.models ?? ['fake-model'];
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let served = 0;

  const server = createServer((req, res) => {
    void readBody(req).then(handle, () => req.socket.destroy());
    function handle(bytes: Buffer): void {
      const recorded = record(req, bytes);
      requests.push(recorded);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (req.method === 'GET' && MODEL_PATHS.has(path)) {
        const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' }));
        sendJson(res, 200, { object: 'list', data });
      } else if (req.method === 'POST' && COMPLETION_PATHS.has(path)) {
        const reply = queue.shift() ?? options.respond?.(recorded.json);
        answer(req, res, reply, recorded.json, ++served);
      } else {
        sendError(res, 404, `fake-chat-completions: no route for ${req.method} ${path}`);
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    get pending() {
      return queue.length;
    },
    enqueue: (...replies) => void queue.push(...replies),
    waitForRequests: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => void waiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  reply: FakeReply | undefined,
  json: unknown,
  n: number,
): void {
  if (reply === undefined) {
    sendError(res, 500, 'fake-chat-completions: no reply was enqueued for this request');
    return;
  }
  switch (reply.kind) {
    case 'completion':
      if ((json as { stream?: unknown } | undefined)?.stream === true)
        void streamCompletion(res, reply, json, n);
      else sendJson(res, 200, completionBody(reply, json, n));
      return;
    case 'error': {
      const headers: Record<string, string> =
        reply.retryAfter === undefined ? {} : { 'retry-after': reply.retryAfter };
      const error = {
        message: reply.message,
        type: reply.type ?? 'error',
        code: reply.code ?? null,
      };
      sendJson(res, reply.status, { error }, headers);
      return;
    }
    case 'raw':
      res.writeHead(reply.status ?? 200, {
        'content-type': reply.contentType ?? 'application/json',
      });
      res.end(reply.body);
      return;
    case 'drop':
      req.socket.destroy();
      return;
    case 'hang':
      return;
    case 'after':
      void reply.gate.finally(() => answer(req, res, reply.reply, json, n));
      return;
    default: {
      const _never: never = reply;
      return _never;
    }
  }
}

function completionBody(
  reply: Extract<FakeReply, { kind: 'completion' }>,
  json: unknown,
  n: number,
): Record<string, unknown> {
  const toolCalls = reply.toolCalls ?? [];
  const requested = (json as { model?: unknown } | undefined)?.model;
  const usage =
    reply.usage === undefined
      ? { promptTokens: 0, completionTokens: 0, totalTokens: 0 }
      : reply.usage;
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof requested === 'string' ? requested : 'fake-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content === undefined ? '' : reply.content,
          ...(toolCalls.length === 0
            ? {}
            : {
                tool_calls: toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }),
        },
        finish_reason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    ...(usage === null
      ? {}
      : {
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.totalTokens,
          },
        }),
  };
}

/** A completion as Chat Completions streams it: chunks of one choice, then usage, then [DONE]. */
async function streamCompletion(
  res: ServerResponse,
  reply: Extract<FakeReply, { kind: 'completion' }>,
  json: unknown,
  n: number,
): Promise<void> {
  const whole = completionBody(reply, json, n);
  const base = {
    id: whole['id'],
    object: 'chat.completion.chunk',
    created: whole['created'],
    model: whole['model'],
  };
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  send(choice({ role: 'assistant', content: '' }));
  const content = reply.content ?? '';
  const pieces = reply.pieces ?? content.match(/\S+\s*|\s+/g) ?? [];
  for (const [i, piece] of pieces.entries()) {
    if (reply.dropAfterPieces !== undefined && i >= reply.dropAfterPieces) {
      // What was sent reaches the client first, as it would before a real connection broke.
      await new Promise((resolve) => setTimeout(resolve, 50));
      res.socket?.destroy();
      return;
    }
    if (i > 0 && reply.pauseMs !== undefined)
      await new Promise((resolve) => setTimeout(resolve, reply.pauseMs));
    if (i === pieces.length - 1 && reply.holdBeforeLast) await reply.holdBeforeLast;
    if (res.destroyed) return;
    send(choice({ content: piece }));
  }
  for (const [index, call] of (reply.toolCalls ?? []).entries())
    send(
      choice({
        tool_calls: [
          {
            index,
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          },
        ],
      }),
    );
  const finish = reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
  send(choice({}, finish));
  const includeUsage =
    (json as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage ===
    true;
  if (includeUsage && whole['usage'] !== undefined)
    send({ ...base, choices: [], usage: whole['usage'] });
  res.end('data: [DONE]\n\n');
}

function record(req: IncomingMessage, bytes: Buffer): RecordedRequest {
  const body = bytes.toString('utf8');
  let json: unknown;
  try {
    json = body === '' ? undefined : JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { method: req.method ?? '', path: req.url ?? '', headers: req.headers, bytes, body, json };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: 'fake_error', code: null } });
}
