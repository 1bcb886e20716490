import { randomUUID } from 'node:crypto';
import type { BackendRow } from '../../store/backend-rows.ts';
import type { Queryable } from '../../store/db.ts';
import { requireAgent } from '../agents/agents.ts';
import type { Mesh } from '../mesh.ts';
import type { BackendFamily } from './family.ts';
import { checkNewBackend, type NewRentedBackend, type RentedKinds } from './rented-kinds.ts';

/*
 * The use cases every rented-backend family shares, over the family's own tables: registering a
 * backend checked against the family's declaration (its key captured with it), removing one with
 * its grants and keys, and revoking an agent's grant.
 */

/** A family's tables: its backends, and agents' grants of them (one per agent). */
export interface RentedStore<R extends BackendRow<string>> {
  insert(db: Queryable, row: Omit<R, 'createdAt'>): Promise<R>;
  delete(db: Queryable, id: string): Promise<unknown>;
  deleteGrant(db: Queryable, agentId: string): Promise<boolean>;
}

/** A family's use cases, as its operations run them. */
export interface RentedAdmin {
  add(mesh: Mesh, input: NewRentedBackend): Promise<BackendRow<string>>;
  remove(mesh: Mesh, name: string): Promise<void>;
  revoke(mesh: Mesh, agent: string): Promise<boolean>;
}

/** The use cases of a family, from its declaration, its registry and its tables. */
export function rentedAdmin<R extends BackendRow<string>>(
  kinds: RentedKinds,
  family: BackendFamily<R>,
  store: RentedStore<R>,
): RentedAdmin & { add(mesh: Mesh, input: NewRentedBackend): Promise<R> } {
  return Object.freeze({
    async add(mesh: Mesh, input: NewRentedBackend): Promise<R> {
      const checked = checkNewBackend(kinds, input);
      return family.register(
        mesh,
        (db) =>
          store.insert(db, {
            id: randomUUID(),
            name: input.name,
            kind: checked.kind,
            development: checked.development,
            settings: checked.settings,
          } as Omit<R, 'createdAt'>),
        checked.apiKey,
      );
    },
    async remove(mesh: Mesh, name: string): Promise<void> {
      await family.remove(mesh, name, (db, backend) => store.delete(db, backend.id));
    },
    async revoke(mesh: Mesh, agentName: string): Promise<boolean> {
      const agent = await requireAgent(mesh, agentName);
      return store.deleteGrant(mesh.db, agent.id);
    },
  });
}
