import type { WorkspaceBackend } from '../exec/backend.ts';
import { localBackend } from '../exec/backends/local.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { ExecutionBackendRecord } from '../store/workspaces.ts';
import { MeshError } from '../tool/errors.ts';

/**
 * Builds the client of one registered backend from its row: the only place a backend kind maps
 * to an implementation. Adding a backend kind is one entry here and its migration check.
 */
export async function backendFor(
  record: ExecutionBackendRecord,
  _secrets: SecretStore,
): Promise<WorkspaceBackend> {
  switch (record.kind) {
    case 'local': {
      const directory = record.settings['directory'];
      return localBackend(typeof directory === 'string' ? { directory } : {});
    }
    default:
      throw new MeshError(
        'backend_kind_unsupported',
        `execution backend ${record.name} is of kind ${String(record.kind)}, which this Mesh cannot run`,
      );
  }
}
