import type { ErrorCode } from '../../src/tool/error-codes.ts';
import { appendFileSync, cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCode } from '../../src/tool/errors.ts';
import type { Db } from '../../src/store/db.ts';
import { loadMigrations, migrate, MIGRATIONS_DIR } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { freshPglite, testDatabases } from '../support/db.ts';
import { freshPostgresUrl } from '../support/postgres.ts';

function copyMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-migrations-'));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

async function refusal(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(hasCode(error, code)).toBe(true);
    return error as Error;
  }
  throw new Error(`expected ${code}`);
}

describe.each(testDatabases())('migrations on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
  });
  afterAll(() => dispose());

  it('are all applied, and applying again changes nothing', async () => {
    const { rows } = await db.query<{ version: number }>(
      'select version from schema_migrations order by version',
    );
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
  });

  it('stop start-up naming an already-applied file that was edited', async () => {
    const dir = copyMigrations();
    appendFileSync(join(dir, '0001_core.sql'), '\n-- an innocent-looking edit\n');
    const error = await refusal(migrate(db, loadMigrations(dir)), 'migration_changed');
    expect(error.message).toContain('0001_core.sql');
  });

  it('refuse a database newer than the code', async () => {
    await db.query(
      "insert into schema_migrations (version, name, checksum) values (9999, 'from_the_future', 'x')",
    );
    const error = await refusal(migrate(db), 'migration_unknown');
    expect(error.message).toContain('migration 9999 (from_the_future)');
    await db.query('delete from schema_migrations where version = 9999');
  });

  it('apply a new file in order, in its own transaction, and roll back a failing one', async () => {
    const dir = copyMigrations();
    writeFileSync(join(dir, '0900_probe.sql'), 'create table migration_probe (id int);');
    expect(await migrate(db, loadMigrations(dir))).toEqual(['0900_probe.sql']);
    writeFileSync(
      join(dir, '0901_broken.sql'),
      'create table half_done (id int);\nselect * from no_such_table;',
    );
    const error = await refusal(migrate(db, loadMigrations(dir)), 'migration_failed');
    expect(error.message).toContain('0901_broken.sql');
    const { rows } = await db.query<{ n: number }>(
      "select count(*)::int as n from information_schema.tables where table_name = 'half_done'",
    );
    expect(rows[0]?.n).toBe(0);
  });
});

describe('migration 0024 (opt-outs by package)', () => {
  it('gives each opt-out written before it the package that declared the tool, and keeps one it cannot place', async () => {
    const db = await freshPglite();
    await db.exec('drop schema public cascade; create schema public');
    const all = loadMigrations();
    await migrate(
      db,
      all.filter((m) => m.version < 24),
    );
    const agent = '00000000-0000-4000-8000-000000000024';
    await db.query(`insert into agents (id, name) values ($1, 'a')`, [agent]);
    await db.query(
      `insert into agent_tools (agent_id, tool_name, enabled)
       values ($1, 'forget', false), ($1, 'web_search', true), ($1, 'a_tool_long_gone', false)`,
      [agent],
    );
    expect(await migrate(db, all)).toContain('0024_tool_opt_outs_by_package.sql');
    const { rows } = await db.query<{ p: string; t: string; e: boolean }>(
      'select package_id as p, tool_name as t, enabled as e from agent_tools order by tool_name',
    );
    expect(rows).toEqual([
      { p: '', t: 'a_tool_long_gone', e: false },
      { p: 'mesh.memory', t: 'forget', e: false },
      { p: 'mesh.web', t: 'web_search', e: true },
    ]);
    await db.close();
  }, 60_000);
});

describe('concurrent migrators', () => {
  it('two migrations of one embedded database at once end with the same schema', async () => {
    // An initialised database with nothing of Mesh's in it (every migration creates its objects
    // in the public schema), without the seconds initdb takes.
    const db = await freshPglite();
    await db.exec('drop schema public cascade; create schema public');
    const results = await Promise.all([migrate(db), migrate(db)]);
    expect([...results[0], ...results[1]].sort()).toEqual(loadMigrations().map((m) => m.file));
    await db.close();
  }, 60_000);

  it.skipIf(!process.env['DATABASE_URL'])(
    'two processes’ pools migrating one server at once both end with the same schema',
    async () => {
      const fresh = await freshPostgresUrl();
      const a = await openPostgres({ url: fresh.url });
      const b = await openPostgres({ url: fresh.url });
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      expect([...ra, ...rb].sort()).toEqual(loadMigrations().map((m) => m.file));
      const schema = async (db: Db) =>
        (
          await db.query<{ t: string }>(
            "select table_name as t from information_schema.tables where table_schema = 'public' order by 1",
          )
        ).rows;
      expect(await schema(a)).toEqual(await schema(b));
      await a.close();
      await b.close();
      await fresh.drop();
    },
  );
});

describe('an unreachable DATABASE_URL', () => {
  it('fails fast naming the host, never the password', async () => {
    const error = await refusal(
      openPostgres({
        url: 'postgres://mesh:hunter2-canary@127.0.0.1:1/meshdb',
        connectTimeoutMs: 2000,
      }),
      'database_unreachable',
    );
    expect(error.message).toContain('127.0.0.1:1/meshdb');
    expect(error.message).not.toContain('hunter2-canary');
    expect(JSON.stringify(error)).not.toContain('hunter2-canary');
  });
});
