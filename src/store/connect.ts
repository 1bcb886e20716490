import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Db } from './db.ts';
import { ownerOnlyTree } from './home-dir.ts';
import { acquireHomeLock } from './home-lock.ts';

/**
 * Where the database is. These are the only bootstrap settings Mesh reads from the environment
 * (DATABASE_URL, MESH_HOME); everything else lives in the database.
 */
export interface ConnectOptions {
  readonly databaseUrl?: string;
  readonly meshHome?: string;
  readonly poolSize?: number;
  /**
   * This process does one piece of work and exits (a CLI command): the embedded database then
   * starts with a small buffer pool, which a command never fills, instead of spending start-up
   * time on a server's. No effect on PostgreSQL.
   */
  readonly oneShot?: boolean;
  /**
   * Told, in a line for a person, what slow first-time work is under way (creating the embedded
   * database in a fresh home takes seconds), so a first command does not sit silent.
   */
  readonly onProgress?: (line: string) => void;
}

/** Reads the bootstrap settings from an environment. */
export function connectOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectOptions {
  return {
    ...(env['DATABASE_URL'] ? { databaseUrl: env['DATABASE_URL'] } : {}),
    meshHome: resolveMeshHome(env),
  };
}

/** `$MESH_HOME`, defaulting to `./.mesh`. */
export function resolveMeshHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['MESH_HOME'] || '.mesh');
}

/**
 * Opens PostgreSQL through a pool when a URL is given; otherwise the embedded PGlite database at
 * `$MESH_HOME/pgdata`, locked to this process.
 */
export async function connect(options: ConnectOptions = connectOptionsFromEnv()): Promise<Db> {
  if (options.databaseUrl) {
    // Each driver is loaded only when used: PGlite's WebAssembly build is large.
    const { openPostgres } = await import('./postgres.ts');
    return openPostgres({
      url: options.databaseUrl,
      ...(options.poolSize ? { max: options.poolSize } : {}),
    });
  }
  const home = options.meshHome ?? resolveMeshHome();
  const lock = acquireHomeLock(home);
  try {
    const dataDir = join(home, 'pgdata');
    if (!existsSync(dataDir))
      options.onProgress?.(
        `preparing the embedded database in ${dataDir} (first use of this home; a few seconds)…`,
      );
    const { openPglite } = await import('./pglite.ts');
    const db = await openPglite({
      dataDir,
      bufferPool: options.oneShot ? 'small' : 'standard',
      onClose: () => lock.release(),
    });
    // Its files and WAL hold conversations: no other user of the machine may read them.
    ownerOnlyTree(dataDir);
    return db;
  } catch (error) {
    lock.release();
    throw error;
  }
}
