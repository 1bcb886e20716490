import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError, type Db } from './db.ts';

/** One numbered SQL file. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly file: string;
  readonly sql: string;
  readonly checksum: string;
}

/** Serializes migrators across processes and replicas (an arbitrary, fixed key). */
const MIGRATION_LOCK_KEY = 7_262_010_101;

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Reads `NNNN_name.sql` files in version order; a malformed name or a repeated number is refused. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match)
      throw new StoreError(
        'migration_invalid',
        `migration file ${file} is not named NNNN_name.sql`,
      );
    const sql = readFileSync(join(dir, file), 'utf8');
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) {
      throw new StoreError(
        'migration_invalid',
        `migration number ${match[1]} is used twice (${file})`,
      );
    }
    migrations.push({
      version,
      name: match[2] ?? '',
      file,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  return migrations;
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

/**
 * Applies pending migrations in order, each in its own transaction under an advisory lock, so
 * that concurrent starters end with the same schema. An already-applied file whose content changed
 * stops start-up naming the file; so does a database that is newer than this code.
 */
export async function migrate(
  db: Db,
  migrations: readonly Migration[] = loadMigrations(),
): Promise<string[]> {
  const seen = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const { rows } = await tx.query<AppliedRow>(
      'select version, name, checksum from schema_migrations order by version',
    );
    for (const row of rows) {
      const known = migrations.find((m) => m.version === row.version);
      if (!known) {
        throw new StoreError(
          'migration_unknown',
          `the database has migration ${row.version} (${row.name}) which this Mesh does not ship; run a newer Mesh`,
        );
      }
      if (known.checksum !== row.checksum) {
        throw new StoreError(
          'migration_changed',
          `migration ${known.file} was changed after it was applied; restore it and add a new migration instead`,
        );
      }
    }
    return new Set(rows.map((row) => row.version));
  });

  // Only the ones not applied yet get a transaction each (a current database, every start of a
  // CLI command, gets none); each is checked again under the lock, as another migrator may have
  // applied it since.
  const applied: string[] = [];
  for (const migration of migrations.filter((m) => !seen.has(m.version))) {
    const didApply = await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const { rows } = await tx.query<{ checksum: string }>(
        'select checksum from schema_migrations where version = $1',
        [migration.version],
      );
      if (rows.length > 0) return false;
      try {
        await tx.exec(migration.sql);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new StoreError('migration_failed', `migration ${migration.file} failed: ${message}`);
      }
      await tx.query(
        'insert into schema_migrations (version, name, checksum) values ($1, $2, $3)',
        [migration.version, migration.name, migration.checksum],
      );
      return true;
    });
    if (didApply) applied.push(migration.file);
  }
  return applied;
}
