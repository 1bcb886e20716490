import type { BrowserBackend } from '../../browser/backend.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { BrowserBackendRecord } from '../../store/browsers.ts';
import { MeshError } from '../../tool/errors.ts';

/** The browser backend kinds this Mesh can run; the table names the vendors still to come. */
export const BROWSER_KINDS = ['local'] as const;

/**
 * Builds the client of one registered browser backend from its row: the only place a backend
 * kind maps to an implementation.
 */
export async function browserBackendFor(
  record: BrowserBackendRecord,
  _secrets: SecretStore,
): Promise<BrowserBackend> {
  switch (record.kind) {
    case 'local': {
      // playwright-core is imported with the backend: only a process that drives a browser pays.
      const { localBrowserBackend } = await import('../../browser/backends/local.ts');
      const executable = record.settings['executable'];
      return localBrowserBackend(
        typeof executable === 'string' ? { executablePath: executable } : {},
      );
    }
    default:
      throw new MeshError(
        'backend_kind_unsupported',
        `browser backend ${record.name} is of kind ${String(record.kind)}, which this Mesh cannot run`,
      );
  }
}
