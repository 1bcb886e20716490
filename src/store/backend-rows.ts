import type { JsonObject } from '../model/json.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';

/** What every registered-backend table row holds: a name, a kind, settings. */
export interface BackendRow<K extends string> {
  readonly id: string;
  readonly name: string;
  readonly kind: K;
  readonly development: boolean;
  readonly settings: JsonObject;
  readonly createdAt: Date;
}

const COLUMNS = `id, name, kind, development, settings, created_at as "createdAt"`;

/**
 * The rows of one table of registered backends (`execution_backends`, `browser_backends`): the
 * same columns and the same five statements, named once. `noun` names a duplicate in its refusal.
 */
export function backendRows<R extends BackendRow<string>>(
  table: 'execution_backends' | 'browser_backends',
  noun: string,
) {
  return {
    insert: async (q: Queryable, b: Omit<R, 'createdAt'>): Promise<R> => {
      try {
        const { rows } = await q.query<R>(
          `insert into ${table} (id, name, kind, development, settings)
           values ($1, $2, $3, $4, $5::jsonb) returning ${COLUMNS}`,
          [b.id, b.name, b.kind, b.development, JSON.stringify(b.settings)],
        );
        return rows[0] as R;
      } catch (error) {
        if (isUniqueViolation(error))
          throw new StoreError('backend_exists', `${noun} named ${b.name} already exists`);
        throw error;
      }
    },
    find: async (q: Queryable, nameOrId: string): Promise<R | undefined> => {
      const { rows } = await q.query<R>(
        `select ${COLUMNS} from ${table} where name = $1 or id::text = $1 limit 1`,
        [nameOrId],
      );
      return rows[0];
    },
    get: async (q: Queryable, id: string): Promise<R | undefined> => {
      const { rows } = await q.query<R>(`select ${COLUMNS} from ${table} where id = $1`, [id]);
      return rows[0];
    },
    list: async (q: Queryable): Promise<R[]> => {
      const { rows } = await q.query<R>(`select ${COLUMNS} from ${table} order by name`);
      return rows;
    },
    /** Deletes a backend (its grants go with it); false when there is none. */
    delete: async (q: Queryable, id: string): Promise<boolean> => {
      const { rows } = await q.query<{ id: string }>(
        `delete from ${table} where id = $1 returning id`,
        [id],
      );
      return rows.length > 0;
    },
  };
}
