import { resolve } from 'node:path';
import { connectOptionsFromEnv, resolveMeshHome } from '../store/connect.ts';
import { readHomeLock, type HomeLockInfo } from '../store/home-lock.ts';
import { MeshError } from '../tool/errors.ts';
import { invokeOperation, type AnyOperation } from './operations/operation.ts';
import { findUnstorable, unstorableMessage } from '../tool/storable-text.ts';

/** Refuses an input holding text the database cannot store, naming the field. */
function refuseUnstorable(input: Readonly<Record<string, unknown>>): void {
  const unstorable = findUnstorable(input, 'input');
  if (unstorable)
    throw new MeshError('invalid_text', unstorableMessage(unstorable.field, unstorable.inName), {
      field: unstorable.field,
    });
}

/*
 * Where the CLI's work runs, and running it here: the half of the CLI's client that needs the
 * store (the home's lock, the connection options) and the composition. The other half, which
 * talks to a running server, is src/cli/operation-client.ts.
 */

/** Where the CLI's work runs: this process, or the server that holds the embedded database. */
export type CliTarget =
  | { readonly kind: 'local' }
  | { readonly kind: 'server'; readonly socket: string; readonly holder: HomeLockInfo };

/**
 * Decides where the CLI's work runs. With DATABASE_URL there is no lock: this process connects
 * to PostgreSQL itself. On the embedded database, a live `mesh serve` holding `$MESH_HOME` that
 * recorded a socket gets the work; otherwise this process opens the database (and is refused by
 * the lock when another process holds it without a socket).
 */
export function cliTarget(env: NodeJS.ProcessEnv = process.env): CliTarget {
  const options = connectOptionsFromEnv(env);
  if (options.databaseUrl) return { kind: 'local' };
  const home = options.meshHome ?? resolveMeshHome(env);
  const holder = readHomeLock(home);
  if (!holder?.socket || holder.pid === process.pid) return { kind: 'local' };
  return { kind: 'server', socket: resolve(home, holder.socket), holder };
}

/**
 * Runs an operation in this process, on a Mesh opened for this one command (a small embedded
 * buffer pool), as the process's own user. Opened only when the input passed, so work refused
 * before it needs the database never opens it. The answer is the operation's wire shape, as the
 * API's body is (JSON: times as ISO text).
 */
export async function invokeInProcess(
  op: AnyOperation,
  input: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv,
): Promise<unknown> {
  const [{ openMesh, meshOptionsFromEnv }, { validateInput }, { currentOperator }] =
    await Promise.all([
      import('./compose.ts'),
      import('./operations/validate-input.ts'),
      import('./runs/operator-call.ts'),
    ]);
  validateInput(op.input, input);
  // The HTTP face refuses these before an operation runs; a file's text is refused here alike,
  // never by the database's own message.
  refuseUnstorable(input);
  const mesh = await openMesh({
    ...meshOptionsFromEnv(env),
    oneShot: true,
    onProgress: (line) => process.stderr.write(`mesh: ${line}\n`),
  });
  try {
    // The machine's own user, in-process: it may post as the people it names (`mesh chat --as`).
    const output: unknown = await invokeOperation(mesh, op, input, {
      actor: currentOperator(),
      relay: true,
    });
    return output === undefined ? undefined : (JSON.parse(JSON.stringify(output)) as unknown);
  } catch (error) {
    // A failure's message may carry what a server or provider said: a held secret is removed
    // before any face prints it.
    if (error instanceof Error) error.message = mesh.redactor.text(error.message);
    throw error;
  } finally {
    await mesh.close();
  }
}
