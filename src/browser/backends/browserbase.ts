import Browserbase, { APIError, NotFoundError } from '@browserbasehq/sdk';
import {
  BrowserBackendUnavailableError,
  type BrowserBackend,
  type BrowserProvisionSpec,
  type ProvisionedSession,
  type SessionRecording,
} from '../backend.ts';

/** How to reach one Browserbase account (or a gateway speaking its API). */
export interface BrowserbaseOptions {
  readonly apiKey: string;
  /** The project sessions are billed to; Browserbase infers it from the key when absent. */
  readonly projectId?: string;
  /** The API root (Browserbase's own unless given). */
  readonly baseUrl?: string;
  /** The control plane's guarded fetch: every request of the SDK goes through it. */
  readonly fetch: typeof globalThis.fetch;
}

/**
 * Browserbase behind the browser contract, through its official SDK: a session is created with
 * the run's ids as metadata, driven over the CDP URL it answers (its signing key in the URL is the
 * auth), watched at its debugger URL (Live View, where a person may take over), released with
 * REQUEST_RELEASE, and its recording (rrweb events) fetched after release.
 */
export function browserbaseBackend(options: BrowserbaseOptions): BrowserBackend {
  const client = new Browserbase({
    apiKey: options.apiKey,
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    // Retries are the caller's: a provisioning failure is an observation, a release is retried
    // by the reaper.
    maxRetries: 0,
    fetch: options.fetch as never,
  });
  const project = options.projectId ? { projectId: options.projectId } : {};

  function unavailable(what: string, error: unknown): BrowserBackendUnavailableError {
    const detail =
      error instanceof APIError && typeof error.status === 'number'
        ? `HTTP ${error.status}`
        : error instanceof Error
          ? error.message
          : String(error);
    return new BrowserBackendUnavailableError(`Browserbase ${what} failed: ${detail}`, {
      cause: error,
    });
  }

  async function provision(spec: BrowserProvisionSpec): Promise<ProvisionedSession> {
    let created;
    try {
      created = await client.sessions.create(
        {
          ...project,
          api_timeout: Math.max(60, Math.ceil(spec.timeoutMs / 1000)),
          userMetadata: { mesh_session: spec.sessionId, mesh_run: spec.runId },
        },
        spec.signal ? { signal: spec.signal } : {},
      );
    } catch (error) {
      throw unavailable('session creation', error);
    }
    let liveViewUrl: string | undefined;
    try {
      liveViewUrl = (await client.sessions.debug(created.id)).debuggerFullscreenUrl;
    } catch {
      // A session without its live view is still a session.
    }
    return {
      externalId: created.id,
      cdp: { url: created.connectUrl },
      ...(liveViewUrl ? { liveViewUrl } : {}),
    };
  }

  return {
    kind: 'browserbase',
    capabilities: {
      liveView: true,
      humanTakeover: true,
      recordings: true,
      warmPool: false,
      development: false,
    },
    provision,
    async attach(externalId) {
      // A running session answers its connect URL again (its signing key in it).
      let session;
      try {
        session = await client.sessions.retrieve(externalId);
      } catch (error) {
        throw unavailable('session lookup', error);
      }
      if (session.status !== 'RUNNING' || !session.connectUrl)
        throw new BrowserBackendUnavailableError(
          `Browserbase session ${externalId} is ${session.status.toLowerCase()}, not running: it cannot be reconnected to`,
        );
      return { url: session.connectUrl };
    },
    async release(externalId) {
      try {
        await client.sessions.update(externalId, { status: 'REQUEST_RELEASE', ...project });
      } catch (error) {
        // Gone already (ended, timed out): released.
        if (error instanceof NotFoundError) return;
        throw unavailable('release', error);
      }
    },
    async recording(externalId): Promise<SessionRecording | undefined> {
      try {
        const events = await client.sessions.recording.retrieve(externalId);
        return {
          mediaType: 'application/json',
          content: Buffer.from(JSON.stringify(events)),
        };
      } catch (error) {
        if (error instanceof NotFoundError) return undefined;
        throw unavailable('recording', error);
      }
    },
    async close() {
      // Nothing held: each request is its own.
    },
  };
}
