import {
  findModelProvider as findModelProviderRow,
  listModelProviders as listModelProviderRows,
} from '../../store/model-providers.ts';
import type { Mesh } from '../mesh.ts';
import type { ModelProviderRecord } from '../records.ts';

/* The reads of model providers that the faces make. */

export function listModelProviders(mesh: Mesh): Promise<ModelProviderRecord[]> {
  return listModelProviderRows(mesh.db);
}

export function findModelProvider(
  mesh: Mesh,
  nameOrId: string,
): Promise<ModelProviderRecord | undefined> {
  return findModelProviderRow(mesh.db, nameOrId);
}
