import { catalog } from '../generated/catalog.ts';
import { loadCatalog, type LoadedCatalog } from '../manifest/verify-catalog.ts';
import { RunLedger } from '../run/ledger.ts';
import { connect, connectOptionsFromEnv, type ConnectOptions } from '../store/connect.ts';
import type { Db } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { services, type Services } from '../tool/context.ts';
import { MEMORY_STORE } from '../../tools/memory/memory-store.ts';
import { memoryStore } from './memory-service.ts';

/** A running Mesh: the database, the verified first-party catalog, and the services handlers get. */
export interface Mesh {
  readonly db: Db;
  readonly catalog: LoadedCatalog;
  readonly ledger: RunLedger;
  readonly services: Services;
  close(): Promise<void>;
}

/**
 * The composition root. Verifies the compiled-in packages first (a first-party problem fails
 * start-up before the database is touched), then connects, migrates and wires the services.
 */
export async function openMesh(options: ConnectOptions = connectOptionsFromEnv()): Promise<Mesh> {
  const loaded = loadCatalog(catalog);
  const db = await connect(options);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return assembleMesh(db, loaded);
}

/** Wires a Mesh over an open, migrated database (tests pass their own). */
export function assembleMesh(db: Db, loaded: LoadedCatalog = loadCatalog(catalog)): Mesh {
  return {
    db,
    catalog: loaded,
    ledger: new RunLedger(db),
    services: services([[MEMORY_STORE, memoryStore(db)]]),
    close: () => db.close(),
  };
}
