import { connect, connectOptionsFromEnv, resolveMeshHome } from '../store/connect.ts';
import { readHomeLock } from '../store/home-lock.ts';
import { loadMigrations, migrate } from '../store/migrate.ts';

/** What `mesh migrate` came to. */
export type MigrationOutcome =
  | { readonly kind: 'applied'; readonly applied: readonly string[]; readonly total: number }
  /** A `mesh serve` holds the embedded database; it migrated it when it started. */
  | { readonly kind: 'served'; readonly pid: number; readonly url: string | undefined };

/**
 * Applies pending migrations to the database the environment names (DATABASE_URL, or the
 * embedded one in $MESH_HOME). On an embedded database a running server holds, nothing is opened:
 * the server applied every migration it ships when it started, and a second process must not
 * open the data directory.
 */
export async function applyMigrations(
  env: NodeJS.ProcessEnv = process.env,
): Promise<MigrationOutcome> {
  const options = connectOptionsFromEnv(env);
  if (!options.databaseUrl) {
    const holder = readHomeLock(options.meshHome ?? resolveMeshHome(env));
    if (holder?.url !== undefined && holder.pid !== process.pid)
      return { kind: 'served', pid: holder.pid, url: holder.url };
  }
  const db = await connect({ ...options, oneShot: true });
  try {
    const applied = await migrate(db);
    return { kind: 'applied', applied, total: loadMigrations().length };
  } finally {
    await db.close();
  }
}
