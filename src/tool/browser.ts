import { serviceKey, type ToolContext } from './context.ts';
import { MeshError } from './errors.ts';

/**
 * What a browser-class handler sees of the run's browser session: go to a page, read it, act on
 * it, take a screenshot. The browser layer (src/browser) rents the session from whichever browser
 * backend the agent was granted and drives it over CDP; a handler never learns which.
 */

/** The page a session is on after an action. */
export interface PageState {
  readonly url: string;
  readonly title: string;
}

/** What `read` returns: the page as markdown, interactive elements marked with their refs. */
export interface PageReading extends PageState {
  /** `text`: the page's visible text; `snapshot`: its structure, every control with a `[ref]`. */
  readonly mode: 'text' | 'snapshot';
  readonly markdown: string;
  /** How many elements got a ref (what `act` can target). */
  readonly refs: number;
}

/** One coarse action on an element of the last reading (by its ref), or on the page. */
export type BrowserAction =
  | { readonly kind: 'click'; readonly ref: string }
  | {
      readonly kind: 'type';
      readonly ref: string;
      readonly text: string;
      readonly submit?: boolean;
    }
  | { readonly kind: 'select'; readonly ref: string; readonly value: string }
  | { readonly kind: 'press'; readonly key: string; readonly ref?: string }
  | { readonly kind: 'scroll'; readonly direction: 'up' | 'down'; readonly ref?: string };

/** What an action came to. */
export interface ActResult extends PageState {
  /** Whether the action navigated to another page. */
  readonly navigated: boolean;
}

/** A screenshot of the current viewport (or the whole page). */
export interface Screenshot extends PageState {
  readonly png: Uint8Array;
}

/** The run's browser session, as a handler uses it. */
export interface BrowserPage {
  navigate(url: string): Promise<PageState & { readonly status: number | null }>;
  read(mode: 'text' | 'snapshot'): Promise<PageReading>;
  act(action: BrowserAction): Promise<ActResult>;
  screenshot(fullPage: boolean): Promise<Screenshot>;
}

/** The session's page for one call, and the session time the call is to be metered. */
export interface MeteredBrowserPage extends BrowserPage {
  /** Session time to add to the run's usage with this call, in ms (read after the action). */
  meter(): Promise<number>;
}

/**
 * Hands a call the browser session of its run, provisioned on the run's first browser call;
 * refuses with `session_time_exhausted` (the session released) once the run's time is spent.
 */
export interface Browsers {
  forCall(ctx: ToolContext): Promise<MeteredBrowserPage>;
  /**
   * Readies the run's live session to be handed to a person (the run is about to park on it):
   * its id and the Live View link a person takes it over through. Refuses with `no_session` when
   * the run has no live session, and `no_live_view` when its backend offers no way to take over.
   */
  handoff(run: { readonly runId: string }): Promise<{ sessionId: string; link: string }>;
}

/** The service browser-class tools declare as `service:mesh.browser`. */
export const BROWSERS = serviceKey<Browsers>('mesh.browser');

/**
 * Why the run cannot have a browser session now: no backend granted, the backend is down or
 * refused, the run's session time is spent. Handlers turn it into an observation naming the fix.
 */
export class BrowserUnavailableError extends MeshError {
  static readonly code = 'browser_unavailable';
  /** Session time the run used that its usage does not count yet, in ms (a spent budget). */
  readonly meteredMs: number;
  constructor(
    readonly reason:
      | 'no_backend'
      | 'backend_down'
      | 'session_time_exhausted'
      | 'development_only'
      | 'no_session'
      | 'no_live_view',
    message: string,
    options?: { cause?: unknown; meteredMs?: number },
  ) {
    super(BrowserUnavailableError.code, message, { reason }, options);
    this.meteredMs = options?.meteredMs ?? 0;
  }
}

/**
 * An action the page refused or that cannot be done: a URL whose address is not allowed, a ref
 * the last reading did not give, an element that cannot take the action, a page that did not
 * load in time. The model sees it and can try something else.
 */
export class BrowserActionError extends MeshError {
  static readonly code = 'browser_action';
  constructor(
    readonly reason:
      | 'egress_refused'
      | 'bad_url'
      | 'unknown_ref'
      | 'not_actionable'
      | 'timeout'
      | 'navigation_failed',
    message: string,
  ) {
    super(BrowserActionError.code, message, { reason });
  }
}
