import { chmodSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { isMeshError, MeshError } from '../tool/errors.ts';
import { isKnownCode } from '../tool/error-codes.ts';
import type { JsonObject } from '../model/json.ts';
import type { Mesh } from './mesh.ts';
import type { UseCaseName } from './use-cases.ts';

/*
 * The Unix socket in $MESH_HOME on which `mesh serve` answers the CLI while it holds the embedded
 * database. The socket file's owner-only permission is the credential: only the user who started
 * the server can connect. Each frame is a 4-byte big-endian length and a node:v8 serialization
 * (which keeps Dates); a request names a use case and its input, a reply carries its output or
 * the error's code, message and data, so the CLI prints exactly what it would have in-process.
 */

/** The socket's file name inside $MESH_HOME. */
export const CLI_SOCKET_NAME = 'mesh.sock';

/** No request or reply of the CLI's comes near this; a bigger length is a corrupt stream. */
const MAX_FRAME = 64 * 1024 * 1024;

interface Request {
  readonly id: number;
  readonly name: string;
  readonly input: unknown;
}

type Reply =
  | { readonly id: number; readonly kind: 'ok'; readonly output: unknown }
  | {
      readonly id: number;
      readonly kind: 'mesh_error';
      readonly code: string;
      readonly message: string;
      readonly data: JsonObject | undefined;
    }
  | { readonly id: number; readonly kind: 'failure'; readonly message: string };

function frame(value: unknown): Buffer {
  const body = serialize(value);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** Calls `onFrame` with each whole frame that arrives on `socket`. */
function readFrames(socket: Socket, onFrame: (value: unknown) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4) {
      const length = buffered.readUInt32BE(0);
      if (length > MAX_FRAME) {
        socket.destroy(new Error('the CLI socket received an oversized frame'));
        return;
      }
      if (buffered.length < 4 + length) return;
      const body = buffered.subarray(4, 4 + length);
      buffered = buffered.subarray(4 + length);
      onFrame(deserialize(body));
    }
  });
}

/** Why a home directory must not hold the socket: whoever may write to it could replace it. */
function unsafeHomeReason(home: string): string | undefined {
  const stat = statSync(home);
  if (process.getuid && stat.uid !== process.getuid()) return `${home} belongs to another user`;
  if ((stat.mode & 0o022) !== 0)
    return `${home} is writable by others (mode ${(stat.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Why a socket (or the home holding it) must not be trusted, or undefined when it may be. */
export function unsafeSocketReason(path: string): string | undefined {
  const home = unsafeHomeReason(dirname(path));
  if (home) return home;
  const socket = lstatSync(path);
  if (!socket.isSocket()) return `${path} is not a socket`;
  if (process.getuid && socket.uid !== process.getuid()) return `${path} belongs to another user`;
  if ((socket.mode & 0o077) !== 0)
    return `${path} is not owner-only (mode ${(socket.mode & 0o777).toString(8)})`;
  return undefined;
}

/** The server's end: answers use-case requests on `path` by running them on `mesh`. */
export interface CliSocketServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Listens on `path` for the CLI. The caller holds the home's lock, so a socket already there was
 * left by a server that died: it is removed, but only if it is a socket (never a file a socket's
 * name was pointed at). The socket is created owner-only; a home others may write to gets none,
 * since whoever can replace the socket could read what the CLI sends.
 */
export async function listenForCli(
  mesh: Mesh,
  path: string,
  log: (line: string) => void,
): Promise<CliSocketServer> {
  const unsafeHome = unsafeHomeReason(dirname(path));
  if (unsafeHome) throw new MeshError('cli_socket_unsafe', unsafeHome);
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
    else throw new MeshError('cli_socket_unsafe', `${path} exists and is not a socket; remove it`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { runUseCase, isUseCaseName } = await import('./use-cases.ts');
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    readFrames(socket, (value) => {
      const request = value as Partial<Request>;
      const id = typeof request.id === 'number' ? request.id : -1;
      const answer = async (): Promise<Reply> => {
        if (!isUseCaseName(request.name) || typeof request.input !== 'object')
          return {
            id,
            kind: 'failure',
            message: 'the CLI sent a request this server does not know',
          };
        try {
          const output = await runUseCase(mesh, request.name, request.input as never);
          return { id, kind: 'ok', output };
        } catch (error) {
          if (isMeshError(error))
            return {
              id,
              kind: 'mesh_error',
              code: error.code,
              message: error.message,
              data: error.data,
            };
          // Only the use case's name: its input may hold a secret the CLI read from a file.
          log(`cli: ${request.name} failed (${error instanceof Error ? error.name : 'error'})`);
          return {
            id,
            kind: 'failure',
            message: error instanceof Error ? error.message : String(error),
          };
        }
      };
      void answer().then((reply) => {
        if (socket.writable) socket.write(frame(reply));
      });
    });
  });
  // Created owner-only from the start (no window in which another user could connect).
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
  chmodSync(path, 0o600);
  return {
    path,
    async close() {
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The CLI's end of one connection to a running server. */
export interface CliSocketClient {
  call(name: UseCaseName, input: unknown): Promise<unknown>;
  close(): void;
}

/**
 * Connects to a server's CLI socket after checking that it (and the home holding it) is the
 * owner's alone. Refused connections reject with the errno code (ECONNREFUSED, ENOENT) so the
 * caller can tell a server that just stopped from one that is there.
 */
export async function connectToServer(path: string): Promise<CliSocketClient> {
  const unsafe = unsafeSocketReason(path);
  if (unsafe)
    throw new MeshError(
      'cli_socket_unsafe',
      `a server holds this home, but its socket is not safe to use: ${unsafe}`,
    );
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = createConnection(path, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let next = 0;
  const fail = (error: Error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  socket.on('error', fail);
  socket.on('close', () =>
    fail(new MeshError('cli_socket_closed', 'the server closed the connection before it answered')),
  );
  readFrames(socket, (value) => {
    const reply = value as Reply;
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    switch (reply.kind) {
      case 'ok':
        waiter.resolve(reply.output);
        return;
      case 'mesh_error':
        waiter.reject(
          new MeshError(
            isKnownCode(reply.code) ? reply.code : 'internal_error',
            reply.message,
            reply.data,
          ),
        );
        return;
      case 'failure':
        waiter.reject(new Error(`the server failed: ${reply.message}`));
        return;
      default: {
        const never: never = reply;
        waiter.reject(new Error(`unexpected reply ${JSON.stringify(never)}`));
      }
    }
  });
  return {
    call(name, input) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        socket.write(frame({ id, name, input } satisfies Request));
      });
    },
    close() {
      socket.end();
    },
  };
}
