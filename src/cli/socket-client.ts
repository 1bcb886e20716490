import { Agent, request, type IncomingMessage } from 'node:http';
import { createConnection } from 'node:net';
import { unsafeSocketReason } from '../app/cli-socket.ts';
import type { JsonObject } from '../model/json.ts';
import { isKnownCode } from '../tool/error-codes.ts';
import { MeshError } from '../tool/errors.ts';

/*
 * The CLI's end of the Unix socket on which `mesh serve` answers it while it holds the embedded
 * database (src/app/cli-socket.ts says where the socket is and when it is safe to use).
 */

/** What a request to the server's API came to: its status and its JSON body (undefined on 204). */
export interface ApiReply {
  readonly status: number;
  readonly body: unknown;
}

/** The CLI's end of a running server's socket. */
export interface CliSocketClient {
  /** A request to the HTTP API, as over TCP; a refusal rejects with its MeshError. */
  request(method: string, path: string, body?: JsonObject): Promise<ApiReply>;
  close(): void;
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('end', () => resolve(Buffer.concat(chunks)));
    response.once('error', reject);
  });
}

/** The MeshError an API refusal carries (`{error: {code, message, field?, run_id?}}`). */
function refusalOf(status: number, bytes: Buffer): MeshError {
  let error: { code?: unknown; message?: unknown; field?: unknown; run_id?: unknown } | undefined;
  try {
    error = (JSON.parse(bytes.toString('utf8')) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  if (typeof error?.code !== 'string' || typeof error.message !== 'string')
    return new MeshError('internal_error', `the server answered ${status} without a refusal`);
  const data: Record<string, string> = {};
  if (typeof error.field === 'string') data['field'] = error.field;
  if (typeof error.run_id === 'string') data['run_id'] = error.run_id;
  return new MeshError(
    isKnownCode(error.code) ? error.code : 'internal_error',
    error.message,
    Object.keys(data).length > 0 ? data : undefined,
  );
}

/**
 * Connects to a server's CLI socket after checking that it (and the home holding it) is the
 * owner's alone. A refused connection rejects with its errno code (ECONNREFUSED, ENOENT) so the
 * caller can tell a server that just stopped from one that is there.
 */
export async function connectToServer(path: string): Promise<CliSocketClient> {
  const unsafe = unsafeSocketReason(path);
  if (unsafe)
    throw new MeshError(
      'cli_socket_unsafe',
      `a server holds this home, but its socket is not safe to use: ${unsafe}`,
    );
  // A dead server is known before any work is sent.
  await new Promise<void>((resolve, reject) => {
    const probe = createConnection(path, () => {
      probe.destroy();
      resolve();
    });
    probe.once('error', reject);
  });
  // One kept-alive connection carries the command's requests.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (
    method: string,
    target: string,
    headers: Record<string, string>,
    payload?: Uint8Array,
  ): Promise<{ status: number; bytes: Buffer; type: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: path,
          method,
          path: target,
          agent,
          headers: {
            host: 'mesh.sock',
            ...headers,
            ...(payload ? { 'content-length': String(payload.byteLength) } : {}),
          },
        },
        (response) => {
          readAll(response).then(
            (bytes) =>
              resolve({
                status: response.statusCode ?? 0,
                bytes,
                type: String(response.headers['content-type'] ?? ''),
              }),
            reject,
          );
        },
      );
      req.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'ECONNRESET' || error.code === 'EPIPE'
            ? new MeshError(
                'cli_socket_closed',
                'the server closed the connection before it answered',
              )
            : error,
        ),
      );
      req.end(payload);
    });
  return {
    async request(method, target, body) {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
      const reply = await send(
        method,
        target,
        payload ? { 'content-type': 'application/json' } : {},
        payload,
      );
      if (reply.status >= 400) throw refusalOf(reply.status, reply.bytes);
      return {
        status: reply.status,
        body:
          reply.bytes.length === 0
            ? undefined
            : (JSON.parse(reply.bytes.toString('utf8')) as unknown),
      };
    },
    close() {
      agent.destroy();
    },
  };
}
