import type { JsonObject } from '../../model/json.ts';

/*
 * What the runtimes of rented resources (workspaces, browser sessions) share: the clients of the
 * registered backends they rent from, and one acquisition per run at a time.
 */

/**
 * The client of each registered backend, built on first use and kept per row and settings (a
 * changed row is a new client; a client that failed to build is built again next time).
 */
/** The clients of one family's registered backends (see {@link backendClients}). */
export interface BackendClients<R, B> {
  of(record: R): Promise<B>;
  /** Ends every client built (with `close`), and forgets them. */
  closeAll(close: (client: B) => Promise<void>): Promise<void>;
}

export function backendClients<R extends { readonly id: string; readonly settings: JsonObject }, B>(
  build: (record: R) => Promise<B>,
): BackendClients<R, B> {
  const clients = new Map<string, { stamp: string; client: Promise<B> }>();
  return {
    of(record: R): Promise<B> {
      const stamp = JSON.stringify(record.settings);
      const cached = clients.get(record.id);
      if (cached && cached.stamp === stamp) return cached.client;
      const client = build(record);
      clients.set(record.id, { stamp, client });
      client.catch(() => clients.delete(record.id));
      return client;
    },
    /** Ends every client built (with `close`), and forgets them. */
    async closeAll(close: (client: B) => Promise<void>): Promise<void> {
      for (const { client } of clients.values()) {
        const built = await client.catch(() => undefined);
        if (built !== undefined) await close(built);
      }
      clients.clear();
    },
  };
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
