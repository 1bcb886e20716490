import type { JsonObject } from '../../model/json.ts';
import type { SecretOwnerType } from '../../secrets/secret-records.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';

/*
 * What the runtimes of rented resources (workspaces, browser sessions) share: the clients of the
 * registered backends they rent from, and one acquisition per run at a time.
 */

/** The clients of one family's registered backends (see {@link backendClients}). */
export interface BackendClients<R, B> {
  of(record: R): Promise<B>;
  /** Ends every client built (with `close`), and forgets them. */
  closeAll(close: (client: B) => Promise<void>): Promise<void>;
}

/**
 * The client of each registered backend, built on first use and kept per row, settings and key
 * version: a changed row is a new client, and so is a replaced key (`keyVersion` reads the
 * version in force, on any replica's rotation), so the next rental uses the new key. A client
 * that failed to build is built again next time. A replaced client is not closed: what was rented
 * with it is released through it.
 */
export function backendClients<R extends { readonly id: string; readonly settings: JsonObject }, B>(
  build: (record: R) => Promise<B>,
  keyVersion: (record: R) => Promise<number | undefined> = () => Promise.resolve(undefined),
): BackendClients<R, B> {
  const clients = new Map<string, { stamp: string; client: Promise<B> }>();
  return {
    async of(record: R): Promise<B> {
      const stamp = JSON.stringify([record.settings, (await keyVersion(record)) ?? null]);
      const cached = clients.get(record.id);
      if (cached && cached.stamp === stamp) return cached.client;
      const client = build(record);
      clients.set(record.id, { stamp, client });
      client.catch(() => {
        if (clients.get(record.id)?.client === client) clients.delete(record.id);
      });
      return client;
    },
    async closeAll(close: (client: B) => Promise<void>): Promise<void> {
      for (const { client } of clients.values()) {
        const built = await client.catch(() => undefined);
        if (built !== undefined) await close(built);
      }
      clients.clear();
    },
  };
}

/** The version of a backend's API key in force, or undefined when it holds none. */
export function apiKeyVersion(
  secrets: SecretStore,
  ownerType: SecretOwnerType,
): (record: { readonly id: string }) => Promise<number | undefined> {
  return async (record) =>
    (await secrets.describeOne({ ownerType, ownerId: record.id }, 'api_key'))?.version;
}

/**
 * One acquisition per run at a time: a call made while the run's `acquire` is in flight gets
 * that one's result (concurrent first calls rent one resource).
 */
export function sharedByRun<T>(): (runId: string, acquire: () => Promise<T>) => Promise<T> {
  const pending = new Map<string, Promise<T>>();
  return (runId, acquire) => {
    let inFlight = pending.get(runId);
    if (!inFlight) {
      inFlight = acquire();
      pending.set(runId, inFlight);
      void inFlight.then(
        () => pending.delete(runId),
        () => pending.delete(runId),
      );
    }
    return inFlight;
  };
}
