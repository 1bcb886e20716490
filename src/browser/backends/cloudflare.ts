import {
  BrowserBackendUnavailableError,
  type BrowserBackend,
  type ProvisionedSession,
} from '../backend.ts';
import { field, requireOk, vendorJson } from './vendor-http.ts';

/** How to reach Cloudflare Browser Run for one account. */
export interface CloudflareBrowserOptions {
  readonly apiToken: string;
  readonly accountId: string;
  /** The API root (Cloudflare's own unless given). */
  readonly baseUrl?: string;
  readonly fetch: typeof globalThis.fetch;
}

/** Cloudflare answers some endpoints bare and others in its `{success, result}` envelope. */
function unwrapped(json: unknown): unknown {
  if (typeof json === 'object' && json !== null && 'result' in json) return json.result;
  return json;
}

/**
 * Cloudflare Browser Run behind the browser contract, over its documented CDP session API: `POST
 * …/browser-rendering/devtools/browser?keep_alive=` acquires a session from the warm pool, its
 * `webSocketDebuggerUrl` is reached with the API token as a bearer header, the session's
 * `devtoolsFrontendUrl` is its Live View (where a person can take over), and `DELETE
 * …/devtools/browser/{id}` closes it.
 */
export function cloudflareBrowserBackend(options: CloudflareBrowserOptions): BrowserBackend {
  const base = `${(options.baseUrl ?? 'https://api.cloudflare.com/client/v4').replace(/\/$/, '')}/accounts/${encodeURIComponent(options.accountId)}/browser-rendering/devtools`;
  const headers = { authorization: `Bearer ${options.apiToken}` };
  const V = 'Cloudflare Browser Run';

  return {
    kind: 'cloudflare',
    capabilities: {
      liveView: true,
      humanTakeover: true,
      recordings: false,
      warmPool: true,
      development: false,
    },
    async provision(spec): Promise<ProvisionedSession> {
      // Cloudflare keeps an idle session at most 20 minutes; a run's session is used, not idle.
      const keepAlive = Math.min(1_200_000, Math.max(10_000, spec.timeoutMs));
      const acquired = await vendorJson(
        options.fetch,
        V,
        'session acquisition',
        `${base}/browser?keep_alive=${keepAlive}`,
        { method: 'POST', headers, ...(spec.signal ? { signal: spec.signal } : {}) },
      );
      requireOk(V, 'session acquisition', acquired.status);
      const body = unwrapped(acquired.json);
      const id = field(body, 'sessionId');
      const websocket = field(body, 'webSocketDebuggerUrl');
      if (!id || !websocket)
        throw new BrowserBackendUnavailableError(
          `${V} answered a session without its sessionId or webSocketDebuggerUrl`,
        );
      let live: string | undefined;
      const detail = await vendorJson(
        options.fetch,
        V,
        'session lookup',
        `${base}/session/${encodeURIComponent(id)}`,
        { method: 'GET', headers },
      ).catch(() => undefined);
      if (detail && detail.status === 200)
        live = field(unwrapped(detail.json), 'devtoolsFrontendUrl');
      return {
        externalId: id,
        cdp: { url: websocket, headers },
        ...(live ? { liveViewUrl: live } : {}),
      };
    },
    async release(externalId) {
      const { status } = await vendorJson(
        options.fetch,
        V,
        'release',
        `${base}/browser/${encodeURIComponent(externalId)}`,
        { method: 'DELETE', headers },
      );
      if (status === 404) return;
      requireOk(V, 'release', status);
    },
    async close() {},
  };
}
