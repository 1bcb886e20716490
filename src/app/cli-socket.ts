import { lstatSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { MeshError } from '../tool/errors.ts';

/*
 * The Unix socket in $MESH_HOME on which `mesh serve` answers the CLI while it holds the embedded
 * database: the same HTTP API as over TCP (src/server/socket-server.ts), validated the same way,
 * where the socket file's owner-only permission is the credential instead of a bearer token.
 */

/** The socket's file name inside $MESH_HOME. */
export const CLI_SOCKET_NAME = 'mesh.sock';

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

/**
 * Makes `path` ready for a server to listen on. The caller holds the home's lock, so a socket
 * already there was left by a server that died: it is removed, but only if it is a socket (never
 * a file a socket's name was pointed at). A home others may write to gets no socket, since
 * whoever can replace the socket could read what the CLI sends.
 */
export function prepareSocketPath(path: string): void {
  const unsafeHome = unsafeHomeReason(dirname(path));
  if (unsafeHome) throw new MeshError('cli_socket_unsafe', unsafeHome);
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
    else throw new MeshError('cli_socket_unsafe', `${path} exists and is not a socket; remove it`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
