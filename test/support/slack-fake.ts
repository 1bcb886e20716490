import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of Slack's Web API: `POST <api>/<method>` with a form-encoded (or JSON) body,
 * the token as `Authorization: Bearer …`, answers `{ok: true, …}` or `{ok: false, error}` with
 * HTTP 200, and HTTP 429 with `Retry-After` for a rate limit — as Slack documents. Records every
 * call it received.
 */

export interface SlackChannel {
  readonly id: string;
  readonly name: string;
  /** Whether the agent's bot user is a member (posting needs it). */
  readonly member: boolean;
}

export interface SlackPosted {
  readonly channel: string;
  readonly ts: string;
  readonly text: string;
  readonly threadTs: string | undefined;
  readonly metadata: unknown;
}

export interface SlackReceived {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly authorized: boolean;
}

/**
 * A failure the next chat.postMessage meets: `ratelimited` (HTTP 429, not posted),
 * `unavailable` (`service_unavailable`, not posted), `lost` (posted, then `fatal_error`).
 */
export type SlackFailure = 'ratelimited' | 'unavailable' | 'lost';

export interface SlackFake {
  /** `http://127.0.0.1:<port>/api`: what `api_url` is set to. */
  readonly apiUrl: string;
  readonly tokens: Set<string>;
  readonly channels: SlackChannel[];
  readonly posted: SlackPosted[];
  readonly received: SlackReceived[];
  readonly failures: SlackFailure[];
  reset(): void;
  close(): Promise<void>;
}

function parseBody(req: IncomingMessage, body: string): Record<string, unknown> {
  if ((req.headers['content-type'] ?? '').startsWith('application/json'))
    return JSON.parse(body) as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    // The SDK sends object arguments (metadata, blocks) JSON-encoded inside the form.
    params[k] = v.startsWith('{') || v.startsWith('[') ? (JSON.parse(v) as unknown) : v;
  }
  return params;
}

/** Starts the fake with #ops (the agent is a member) and #private-stuff (it is not). */
export async function startSlackFake(): Promise<SlackFake> {
  const tokens = new Set<string>();
  const channels: SlackChannel[] = [];
  const posted: SlackPosted[] = [];
  const received: SlackReceived[] = [];
  const failures: SlackFailure[] = [];
  let clock = 1_700_000_000;
  const seed = () => {
    channels.length = 0;
    channels.push(
      { id: 'C0OPS00001', name: 'ops', member: true },
      { id: 'C0PRIV0001', name: 'private-stuff', member: false },
    );
  };
  seed();

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) =>
      res
        .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
        .end(JSON.stringify(payload));
    const method = /^\/api\/([a-zA-Z.]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !method) return send(404, { ok: false, error: 'unknown_method' });
    const params = parseBody(req, body);
    const auth = req.headers.authorization ?? '';
    const authorized = auth.startsWith('Bearer ') && tokens.has(auth.slice('Bearer '.length));
    received.push({ method, params, authorized });
    if (!authorized) return send(200, { ok: false, error: 'invalid_auth' });
    if (method === 'auth.test')
      return send(200, { ok: true, user: 'mesh-agent', user_id: 'U0AGENT' });
    if (method !== 'chat.postMessage') return send(200, { ok: false, error: 'unknown_method' });

    const failure = failures.shift();
    if (failure === 'ratelimited')
      return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '0' });
    if (failure === 'unavailable') return send(200, { ok: false, error: 'service_unavailable' });
    const wanted = (typeof params['channel'] === 'string' ? params['channel'] : '').replace(
      /^#/,
      '',
    );
    const channel = channels.find((c) => c.id === wanted || c.name === wanted);
    if (!channel) return send(200, { ok: false, error: 'channel_not_found' });
    if (!channel.member) return send(200, { ok: false, error: 'not_in_channel' });
    if (typeof params['text'] !== 'string' || params['text'] === '')
      return send(200, { ok: false, error: 'no_text' });
    const ts = `${++clock}.000100`;
    posted.push({
      channel: channel.id,
      ts,
      text: params['text'],
      threadTs: typeof params['thread_ts'] === 'string' ? params['thread_ts'] : undefined,
      metadata: params['metadata'],
    });
    if (failure === 'lost') return send(200, { ok: false, error: 'fatal_error' });
    return send(200, { ok: true, channel: channel.id, ts, message: { text: params['text'], ts } });
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    apiUrl: `http://127.0.0.1:${port}/api`,
    tokens,
    channels,
    posted,
    received,
    failures,
    reset() {
      posted.length = 0;
      received.length = 0;
      failures.length = 0;
      seed();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
