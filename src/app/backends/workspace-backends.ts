import { BackendUnavailableError, type WorkspaceBackend } from '../../exec/backend.ts';
import { localBackend } from '../../exec/backends/local.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { ExecutionBackendRecord } from '../../store/workspaces.ts';
import { MeshError } from '../../tool/errors.ts';

/**
 * Builds the client of one registered backend from its row: the only place a backend kind maps
 * to an implementation. Adding a backend kind is one entry here and its migration check.
 */
export async function backendFor(
  record: ExecutionBackendRecord,
  secrets: SecretStore,
): Promise<WorkspaceBackend> {
  switch (record.kind) {
    case 'local': {
      const directory = record.settings['directory'];
      return localBackend(typeof directory === 'string' ? { directory } : {});
    }
    case 'e2b': {
      const apiKey = await secrets.reveal({
        ownerType: 'execution_backend',
        ownerId: record.id,
        kind: 'api_key',
      });
      if (apiKey === undefined)
        throw new BackendUnavailableError(
          `execution backend ${record.name} has no API key captured; an operator sets one (workspaces.key)`,
        );
      const text = (key: string) =>
        typeof record.settings[key] === 'string' ? record.settings[key] : undefined;
      const apiUrl = text('api_url');
      const sandboxUrl = text('sandbox_url');
      const template = text('template');
      // The E2B SDK (with its RPC stack) is a third of a second to import: only a workspace on
      // E2B pays for it, not every process that opens a Mesh.
      const { e2bBackend } = await import('../../exec/backends/e2b.ts');
      return e2bBackend({
        apiKey,
        ...(apiUrl ? { apiUrl } : {}),
        ...(sandboxUrl ? { sandboxUrl } : {}),
        ...(template ? { template } : {}),
      });
    }
    default:
      throw new MeshError(
        'backend_kind_unsupported',
        `execution backend ${record.name} is of kind ${String(record.kind)}, which this Mesh cannot run`,
      );
  }
}
