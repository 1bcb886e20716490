import { chmodSync } from 'node:fs';
import type { Socket } from 'node:net';
import { prepareSocketPath } from '../app/cli-socket.ts';
import type { Mesh } from '../app/mesh.ts';
import { currentOperator } from '../app/runs/operator-call.ts';
import { meshApp, nodeServer } from './server.ts';

/*
 * The CLI's socket in $MESH_HOME: the JSON API as over TCP (the same routes, validation and
 * refusals), where the socket file's owner-only permission is the credential. Every call is the
 * server's owner's: only they can connect.
 */

/** A listening socket server. */
export interface SocketServer {
  readonly path: string;
  close(): Promise<void>;
}

/** The principal every call on the socket acts as: the user this server runs as. */
function socketPrincipal() {
  const actor = currentOperator();
  return {
    actor,
    operator: {
      id: 'cli-socket',
      label: `cli socket (${actor})`,
      // The machine's own user, who owns the database: it may post as the people it names
      // (`mesh chat --as`), and what it posts is recorded as relayed by it.
      kind: 'relay' as const,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    },
  };
}

/**
 * Serves the API on the Unix socket at `path`, created owner-only from the start (no window in
 * which another user could connect), after {@link prepareSocketPath} made it safe to use.
 */
export async function listenOnSocket(
  mesh: Mesh,
  path: string,
  options: { readonly log: (line: string) => void; readonly version: string },
): Promise<SocketServer> {
  prepareSocketPath(path);
  const log = (line: string) => options.log(`cli: ${line}`);
  const app = meshApp(mesh, { log, version: options.version, principal: socketPrincipal() });
  const server = nodeServer(app, log);
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
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
