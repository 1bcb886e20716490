import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPglite } from '../../src/store/pglite.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { freshPostgresUrl } from './postgres.ts';

/** A database a contract suite runs against, opened fresh and migrated. */
export interface TestDatabase {
  readonly name: 'pglite' | 'postgres';
  /** Opens a fresh, migrated database; `dispose` closes it and drops what it created. */
  open(): Promise<{ db: Db; url?: string; dispose(): Promise<void> }>;
}

/**
 * The run's template dump as PGlite reads it, built once per worker. Node 20 reads a Blob back
 * through a stream in small chunks (about 0.3 s for the 40 MB dump, per database started), so
 * `arrayBuffer` hands out a copy of the bytes it was built from instead.
 */
class TemplateDump extends Blob {
  readonly #contents: Uint8Array;
  constructor(contents: Uint8Array) {
    super([contents]);
    this.#contents = contents;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(new Uint8Array(this.#contents).buffer);
  }
}

let templateDump: TemplateDump | undefined;

/** A fresh, migrated embedded database, started from the run's template dump. */
export async function freshPglite(): Promise<Db> {
  templateDump ??= new TemplateDump(readFileSync(inject('pgliteTemplate')));
  return openPglite({ loadDataDir: templateDump });
}

/** PGlite always; the real PostgreSQL server too when DATABASE_URL is set. */
export function testDatabases(): TestDatabase[] {
  const list: TestDatabase[] = [
    {
      name: 'pglite',
      async open() {
        const db = await freshPglite();
        // A Mesh closes its database itself: closing again is no error here.
        return { db, dispose: () => db.close().catch(() => undefined) };
      },
    },
  ];
  if (process.env['DATABASE_URL']) {
    list.push({
      name: 'postgres',
      async open() {
        const fresh = await freshPostgresUrl();
        const db = await openPostgres({ url: fresh.url });
        await migrate(db);
        return {
          db,
          url: fresh.url,
          async dispose() {
            await db.close().catch(() => undefined);
            await fresh.drop();
          },
        };
      },
    });
  }
  return list;
}
