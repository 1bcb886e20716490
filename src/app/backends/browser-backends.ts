import { BrowserBackendUnavailableError, type BrowserBackend } from '../../browser/backend.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { BrowserBackendRecord } from '../../store/browsers.ts';
import { MeshError } from '../../tool/errors.ts';

/** The browser backend kinds this Mesh can run; the table names the vendors still to come. */
export const BROWSER_KINDS = ['local', 'browserbase'] as const;

/**
 * Builds the client of one registered browser backend from its row: the only place a backend
 * kind maps to an implementation.
 */
export async function browserBackendFor(
  record: BrowserBackendRecord,
  secrets: SecretStore,
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
    case 'browserbase': {
      const apiKey = await secrets.reveal({
        ownerType: 'browser_backend',
        ownerId: record.id,
        kind: 'api_key',
      });
      if (apiKey === undefined)
        throw new BrowserBackendUnavailableError(
          `browser backend ${record.name} has no API key captured; re-add it with --api-key-file`,
        );
      const text = (key: string) =>
        typeof record.settings[key] === 'string' ? record.settings[key] : undefined;
      const baseUrl = text('base_url');
      const projectId = text('project_id');
      const [{ browserbaseBackend }, { createGuardedFetch }] = await Promise.all([
        import('../../browser/backends/browserbase.ts'),
        import('../../egress/guarded-fetch.ts'),
      ]);
      return browserbaseBackend({
        apiKey,
        ...(baseUrl ? { baseUrl } : {}),
        ...(projectId ? { projectId } : {}),
        // Plain http to loopback only for a development backend (a gateway or fake here).
        fetch: createGuardedFetch({ allowLoopbackHttp: record.development }) as typeof fetch,
      });
    }
    default:
      throw new MeshError(
        'backend_kind_unsupported',
        `browser backend ${record.name} is of kind ${String(record.kind)}, which this Mesh cannot run`,
      );
  }
}
