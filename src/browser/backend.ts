import { MeshError } from '../tool/errors.ts';
import type { BrowserPage } from '../tool/browser.ts';

export type {
  ActResult,
  BrowserAction,
  BrowserPage,
  PageReading,
  PageState,
  Screenshot,
} from '../tool/browser.ts';

/**
 * The browser layer's seam: where browser-class work runs. A backend rents browser sessions; a
 * session belongs to exactly one run. Its own contract, not the workspace's: a session is watched
 * and taken over by people, billed in session time, and sold by other vendors. Every backend is
 * driven the same way once provisioned (playwright-core over CDP), so what a backend implements is
 * the vendor's session API: provision, where to connect, live view, release, recording.
 */

/** What a backend can do beyond the intersection every backend has (provision, CDP, release). */
export interface BrowserCapabilities {
  /** A person can watch the session live at a URL the backend gives. */
  readonly liveView: boolean;
  /** A person can take the session over (click, type) and hand it back. */
  readonly humanTakeover: boolean;
  /** The backend records the session, and the recording can be fetched after release. */
  readonly recordings: boolean;
  /** Sessions start from a warm pool, without a cold start. */
  readonly warmPool: boolean;
  /** A development backend: never for production, marked so wherever an operator sees it. */
  readonly development: boolean;
}

/** What a session is provisioned for. */
export interface BrowserProvisionSpec {
  /** Mesh's id for the session (a UUID): names it in the backend too, where it has names. */
  readonly sessionId: string;
  readonly runId: string;
  readonly agentId: string;
  /** The vendor may end the session after this long, whatever happens. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * Where a browser on this machine may connect (the development backend holds it to this, on
   * every connection); a vendor's browser runs outside our perimeter and ignores it.
   */
  readonly egress?: { readonly allowLoopback: boolean };
}

/** Where to connect to a session over CDP, and with what (the vendor's auth). */
export interface CdpEndpoint {
  /** A `ws://` or `wss://` URL of the browser's DevTools endpoint. */
  readonly url: string;
  /** Headers the connection must carry (a bearer token); never logged. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A session the backend rented, before Mesh connects to it. */
export interface ProvisionedSession {
  /** The backend's own id for it: how it is found to release, from any process. */
  readonly externalId: string;
  readonly cdp: CdpEndpoint;
  /** Where a person watches it live, when the backend offers live view. */
  readonly liveViewUrl?: string;
}

/** What a released session's recording is stored as: one artifact of the run. */
export interface SessionRecording {
  readonly mediaType: string;
  readonly content: Uint8Array;
}

/** A kind of place to rent browsers. */
export interface BrowserBackend {
  /** The backend kind (`local`, `cloudflare`, …): a row's `kind`, never a tool name. */
  readonly kind: string;
  readonly capabilities: BrowserCapabilities;
  provision(spec: BrowserProvisionSpec): Promise<ProvisionedSession>;
  /**
   * Ends a session by its external id, from any process: the run's end, or the reaper's way to
   * end a session whose run died with the process that drove it. Idempotent.
   */
  release(externalId: string): Promise<void>;
  /**
   * Where to connect to a live session again, by its external id, from any process: a run resumed
   * by another holder (after a person handed its browser back, or after its process died) goes on
   * in the same session, on the page it was left at. Absent where the vendor cannot reconnect.
   */
  attach?(externalId: string): Promise<CdpEndpoint>;
  /** The vendor's recording of a released session, when the backend records. */
  recording?(externalId: string): Promise<SessionRecording | undefined>;
  /** Ends what this process holds of the backend (connections, processes). */
  close(): Promise<void>;
}

/** A session connected over CDP: the handler's page, plus what the layer needs to end it. */
export interface DrivenSession extends BrowserPage {
  /** Mesh's own recording of the session so far, when it was asked to keep one. */
  journal(): SessionRecording | undefined;
  /** Drops the CDP connection (the session itself is released through its backend). */
  disconnect(): Promise<void>;
}

/**
 * The backend cannot be reached or refused the request (down, bad credential, quota): the
 * browser tools report it as an observation naming the fix.
 */
export class BrowserBackendUnavailableError extends MeshError {
  static readonly code = 'browser_backend_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(BrowserBackendUnavailableError.code, message, undefined, options);
  }
}

/**
 * Where Mesh serves its own Live View of a session (for a backend without one of its own whose
 * browser Mesh can reach): a page of Mesh's UI, behind the operator's session.
 */
export function meshLiveViewPath(sessionId: string): string {
  return `/browser-sessions/${encodeURIComponent(sessionId)}/live`;
}
