import { resolve } from 'node:path';
import { connectOptionsFromEnv, resolveMeshHome } from '../store/connect.ts';
import { readHomeLock, type HomeLockInfo } from '../store/home-lock.ts';
import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';
import type { CliSocketClient } from './cli-socket.ts';
import type { Mesh } from './mesh.ts';
import type { AnyOperation } from './operations/operation.ts';
import type { UseCaseInput, UseCaseName, UseCaseOutput } from './use-cases.ts';

/**
 * How a face calls a use case: by name, with a plain input. The same call runs in this process or
 * in a running server, and fails with the same MeshError either way.
 */
export type UseCaseCall = <N extends UseCaseName>(
  name: N,
  input: UseCaseInput<N>,
) => Promise<UseCaseOutput<N>>;

/** Where the CLI's work runs: this process, or the server that holds the embedded database. */
export type UseCaseTarget =
  | { readonly kind: 'local' }
  | { readonly kind: 'server'; readonly socket: string; readonly holder: HomeLockInfo };

/**
 * Decides where the CLI's work runs. With DATABASE_URL there is no lock: this process connects
 * to PostgreSQL itself. On the embedded database, a live `mesh serve` holding `$MESH_HOME` that
 * recorded a socket gets the work; otherwise this process opens the database (and is refused by
 * the lock when another process holds it without a socket).
 */
export function useCaseTarget(env: NodeJS.ProcessEnv = process.env): UseCaseTarget {
  const options = connectOptionsFromEnv(env);
  if (options.databaseUrl) return { kind: 'local' };
  const home = options.meshHome ?? resolveMeshHome(env);
  const holder = readHomeLock(home);
  if (!holder?.socket || holder.pid === process.pid) return { kind: 'local' };
  return { kind: 'server', socket: resolve(home, holder.socket), holder };
}

async function inProcess<T>(fn: (call: UseCaseCall) => Promise<T>, env: NodeJS.ProcessEnv) {
  const [{ openMesh, meshOptionsFromEnv }, { runUseCase }] = await Promise.all([
    import('./mesh.ts'),
    import('./use-cases.ts'),
  ]);
  // Opened on the first call, so work refused before it needs the database never opens it; and
  // for this one command only (a small embedded buffer pool).
  let opened: Promise<Mesh> | undefined;
  const open = () =>
    openMesh({
      ...meshOptionsFromEnv(env),
      oneShot: true,
      onProgress: (line) => process.stderr.write(`mesh: ${line}\n`),
    });
  const call = (async (name: UseCaseName, input: UseCaseInput<UseCaseName>) =>
    runUseCase(await (opened ??= open()), name, input)) as UseCaseCall;
  try {
    return await fn(call);
  } finally {
    if (opened) await (await opened.catch(() => undefined))?.close();
  }
}

/**
 * Runs `here` in this process, or `there` with the server holding the home (see
 * {@link useCaseTarget}). A server that stopped between reading its lock and connecting is
 * noticed: the work then runs here once the lock is free.
 */
async function hereOrThere<T>(
  here: () => Promise<T>,
  there: (server: CliSocketClient) => Promise<T>,
  env: NodeJS.ProcessEnv,
): Promise<T> {
  const target = useCaseTarget(env);
  if (target.kind === 'local') return here();
  const { connectToServer } = await import('./cli-socket.ts');
  let client;
  try {
    client = await connectToServer(target.socket);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ECONNREFUSED' && code !== 'ENOENT') throw error;
    if (useCaseTarget(env).kind === 'local') return here();
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

/** Runs `fn` with a way to call use cases, in this process or in the server holding the home. */
export function withUseCases<T>(
  fn: (call: UseCaseCall) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  return hereOrThere(
    () => inProcess(fn, env),
    (server) =>
      fn((name, input) => server.call(name, input) as Promise<UseCaseOutput<typeof name>>),
    env,
  );
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
    async () => {
      const output = await inProcess(
        (call) => call('operations.invoke', { name: op.name, input }),
        env,
      );
      return output === undefined ? undefined : (JSON.parse(JSON.stringify(output)) as unknown);
    },
    async (server) => {
      const { operationRequest } = await import('./operations/http-layout.ts');
      const request = operationRequest(op, input);
      return (await server.request(request.method, request.target, request.body as JsonObject))
        .body;
    },
    env,
  );
}
