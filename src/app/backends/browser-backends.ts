import { BrowserBackendUnavailableError, type BrowserBackend } from '../../browser/backend.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { BrowserBackendRecord } from '../../store/browsers.ts';
import { MeshError } from '../../tool/errors.ts';

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
    case 'cloudflare':
    case 'browserbase':
    case 'steel': {
      const apiKey = await secrets.reveal({
        ownerType: 'browser_backend',
        ownerId: record.id,
        kind: 'api_key',
      });
      if (apiKey === undefined)
        throw new BrowserBackendUnavailableError(
          `browser backend ${record.name} has no API key captured; an operator sets one (browsers.key)`,
        );
      const text = (key: string) =>
        typeof record.settings[key] === 'string' ? record.settings[key] : undefined;
      const baseUrl = text('base_url');
      const { createGuardedFetch } = await import('../../egress/guarded-fetch.ts');
      // Plain http to loopback only for a development backend (a gateway or fake here).
      const fetch = createGuardedFetch({
        allowLoopbackHttp: record.development,
      }) as typeof globalThis.fetch;
      const at = baseUrl ? { baseUrl } : {};
      if (record.kind === 'browserbase') {
        const projectId = text('project_id');
        const { browserbaseBackend } = await import('../../browser/backends/browserbase.ts');
        return browserbaseBackend({ apiKey, fetch, ...at, ...(projectId ? { projectId } : {}) });
      }
      if (record.kind === 'steel') {
        const { steelBackend } = await import('../../browser/backends/steel.ts');
        return steelBackend({ apiKey, fetch, ...at });
      }
      const { cloudflareBrowserBackend } = await import('../../browser/backends/cloudflare.ts');
      return cloudflareBrowserBackend({
        apiToken: apiKey,
        accountId: text('account_id') ?? '',
        fetch,
        ...at,
      });
    }
    default:
      throw new MeshError(
        'backend_kind_unsupported',
        `browser backend ${record.name} is of kind ${String(record.kind)}, which this Mesh cannot run`,
      );
  }
}
