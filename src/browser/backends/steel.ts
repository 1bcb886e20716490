import {
  BrowserBackendUnavailableError,
  type BrowserBackend,
  type ProvisionedSession,
} from '../backend.ts';
import { field, requireOk, vendorJson } from './vendor-http.ts';

/** How to reach one Steel account (or a self-hosted Steel). */
export interface SteelOptions {
  readonly apiKey: string;
  /** The API root (Steel's own unless given). */
  readonly baseUrl?: string;
  readonly fetch: typeof globalThis.fetch;
}

/**
 * Steel behind the browser contract, over its documented HTTP API (the `steel-sdk` package is not
 * served by the registry this project installs from): `POST /v1/sessions` with the
 * `steel-api-key` header creates a session whose `websocketUrl` takes the key and session id as
 * its query; its `debugUrl` is the live view (interactive: a person can take over); `POST
 * /v1/sessions/{id}/release` ends it.
 */
export function steelBackend(options: SteelOptions): BrowserBackend {
  const base = (options.baseUrl ?? 'https://api.steel.dev').replace(/\/$/, '');
  const headers = { 'steel-api-key': options.apiKey };
  const V = 'Steel';
  /** A session's CDP endpoint: Steel's websocket with the key and the session in its query. */
  const connectUrl = (websocket: string, id: string) => {
    const cdp = new URL(websocket);
    cdp.searchParams.set('apiKey', options.apiKey);
    cdp.searchParams.set('sessionId', id);
    return { url: cdp.href };
  };

  return {
    kind: 'steel',
    capabilities: {
      liveView: true,
      humanTakeover: true,
      recordings: false,
      warmPool: false,
      development: false,
    },
    async provision(spec): Promise<ProvisionedSession> {
      const { status, json } = await vendorJson(
        options.fetch,
        V,
        'session creation',
        `${base}/v1/sessions`,
        {
          method: 'POST',
          headers,
          body: { sessionId: spec.sessionId, timeout: spec.timeoutMs },
          ...(spec.signal ? { signal: spec.signal } : {}),
        },
      );
      requireOk(V, 'session creation', status);
      const id = field(json, 'id');
      const websocket = field(json, 'websocketUrl');
      if (!id || !websocket)
        throw new BrowserBackendUnavailableError(
          `${V} answered a session without its id or websocketUrl`,
        );
      const live = field(json, 'debugUrl');
      return {
        externalId: id,
        cdp: connectUrl(websocket, id),
        ...(live ? { liveViewUrl: live } : {}),
      };
    },
    async attach(externalId) {
      // A live session's details name its websocket again.
      const { status, json } = await vendorJson(
        options.fetch,
        V,
        'session lookup',
        `${base}/v1/sessions/${encodeURIComponent(externalId)}`,
        { method: 'GET', headers },
      );
      requireOk(V, 'session lookup', status);
      const websocket = field(json, 'websocketUrl');
      if (field(json, 'status') !== 'live' || !websocket)
        throw new BrowserBackendUnavailableError(
          `${V} session ${externalId} is not live: it cannot be reconnected to`,
        );
      return connectUrl(websocket, externalId);
    },
    async release(externalId) {
      const { status } = await vendorJson(
        options.fetch,
        V,
        'release',
        `${base}/v1/sessions/${encodeURIComponent(externalId)}/release`,
        { method: 'POST', headers },
      );
      if (status === 404) return;
      requireOk(V, 'release', status);
    },
    async close() {},
  };
}
