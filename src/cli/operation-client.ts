import { cliTarget, invokeInProcess } from '../app/cli-target.ts';
import type { AnyOperation } from '../app/operations/operation.ts';
import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';
import type { CliSocketClient } from './socket-client.ts';

/**
 * Runs `here` in this process, or `there` with the server holding the home (see
 * {@link cliTarget}). A server that stopped between reading its lock and connecting is
 * noticed: the work then runs here once the lock is free.
 */
async function hereOrThere<T>(
  here: () => Promise<T>,
  there: (server: CliSocketClient) => Promise<T>,
  env: NodeJS.ProcessEnv,
): Promise<T> {
  const target = cliTarget(env);
  if (target.kind === 'local') return here();
  const { connectToServer } = await import('./socket-client.ts');
  let client;
  try {
    client = await connectToServer(target.socket);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ECONNREFUSED' && code !== 'ENOENT') throw error;
    if (cliTarget(env).kind === 'local') return here();
    throw new MeshError(
      'home_locked',
      `the embedded database is in use by process ${target.holder.pid}` +
        `${target.holder.url ? ` (serving ${target.holder.url})` : ''}, which is not answering on its socket; try again, or stop it first`,
    );
  }
  try {
    return await there(client);
  } finally {
    client.close();
  }
}

/**
 * Runs an operation of the catalog for the CLI: over the HTTP API of the server holding the home
 * (on its socket), or in this process. Either way the input is validated by the operation, and
 * the answer is its wire shape, as the API's body is (JSON: times as ISO text).
 */
export function invokeFromCli(
  op: AnyOperation,
  input: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<unknown> {
  return hereOrThere(
    () => invokeInProcess(op, input, env),
    async (server) => {
      const { operationRequest } = await import('../app/operations/http-layout.ts');
      const request = operationRequest(op, input);
      return (await server.request(request.method, request.target, request.body as JsonObject))
        .body;
    },
    env,
  );
}
