import type { Clock } from '../tool/clock.ts';
import { McpTransportError, transportFailure, type McpSession } from './session.ts';

/**
 * Long-lived MCP sessions, one per key (an agent's binding to a server), reused by every request
 * made for that key: a server sees one `initialize` and, when the session is no longer needed,
 * one `DELETE`, instead of a session per request that it has to expire on its own.
 */

/** How long an unused session is kept before it is ended. */
export const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;

/**
 * When a request that failed on a pooled session may be sent again on a fresh one (once):
 * `always` for a request without effects (tools/list); `not_sent` when the failure proves the
 * request never reached the server (tools/call: an effect must not repeat).
 */
export type ResendRule = 'always' | 'not_sent';

export interface SessionPoolOptions {
  /** What "idle for a while" is measured with; tests move a manual clock. */
  readonly clock: Clock;
  readonly idleMs?: number;
  /** How often idle sessions are looked for; 0 never (a test calls `closeIdle` itself). */
  readonly sweepEveryMs?: number;
}

interface Entry {
  readonly opening: Promise<McpSession>;
  /** What the session was opened with (URL, timeout…): a use with other settings opens anew. */
  readonly settings: string;
  /** Replaced by a session with newer settings: ended once its last request is done. */
  retired: boolean;
  /** Aborts an opening still under way (the key is being closed). */
  readonly abort: AbortController;
  session?: McpSession;
  inUse: number;
  lastUsedAt: number;
}

export class SessionPool {
  readonly #entries = new Map<string, Entry>();
  readonly #closing = new Set<Promise<void>>();
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: SessionPoolOptions) {
    this.#clock = options.clock;
    this.#idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    const every = options.sweepEveryMs ?? Math.min(this.#idleMs, 60_000);
    if (every > 0) {
      this.#timer = setInterval(() => void this.closeIdle(), every);
      this.#timer.unref();
    }
  }

  /** The keys with a session open or opening. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * Runs `request` on the key's session, opening it first when there is none; concurrent first
   * uses share one opening. When the request fails because a session opened earlier is gone (the
   * server ended it, or its connection failed) the session is dropped, and the request is sent
   * once more on a fresh session when `resend` allows it. A failure to open is not retried here.
   * `settings` names what the session is opened with: when they changed since the key's session
   * was opened (an operator set another request timeout), a new one is opened for this and later
   * requests, and the old one ends once the requests already on it are done.
   */
  async use<T>(
    key: string,
    open: (signal: AbortSignal) => Promise<McpSession>,
    request: (session: McpSession) => Promise<T>,
    resend: ResendRule,
    settings = '',
  ): Promise<T> {
    const once = () => this.#once(key, settings, open, request);
    const first = await once();
    if ('value' in first) return first.value;
    const failed = first.stale ? transportFailure(first.error) : undefined;
    if (!failed || (resend === 'not_sent' && failed.delivery !== 'not_sent')) throw first.error;
    const second = await once();
    if ('value' in second) return second.value;
    throw second.error;
  }

  /**
   * Opens the key's session ahead of its first use when none is open or opening (a turn about to
   * offer the server's tools): the handshake goes while the model thinks, not between its answer
   * and the call. A failure is not reported here: the use that follows opens again, and reports it.
   */
  warm(key: string, open: (signal: AbortSignal) => Promise<McpSession>, settings = ''): void {
    if (this.#closed) return;
    void this.#entry(key, settings, open).opening.catch(() => undefined);
  }

  async #once<T>(
    key: string,
    settings: string,
    open: (signal: AbortSignal) => Promise<McpSession>,
    request: (session: McpSession) => Promise<T>,
  ): Promise<{ value: T } | { error: unknown; stale: boolean }> {
    if (this.#closed)
      return {
        error: new McpTransportError('the Mesh is closing', { delivery: 'not_sent' }),
        stale: false,
      };
    const entry = this.#entry(key, settings, open);
    // A session that was open before this request may have gone stale while it waited.
    const reused = entry.session !== undefined;
    entry.inUse++;
    try {
      let session: McpSession;
      try {
        session = await entry.opening;
      } catch (error) {
        return { error, stale: false };
      }
      try {
        return { value: await request(session) };
      } catch (error) {
        const failed = transportFailure(error);
        // A session whose transport failed is not trusted again; one the server ended is not
        // told so (it answered 404: there is nothing left to DELETE).
        // A request its caller cancelled says nothing about the session: it is kept.
        const broken = failed !== undefined && !failed.cancelled;
        if (broken) this.#drop(key, entry, failed.sessionExpired ? 'discard' : 'close');
        return { error, stale: reused && broken };
      }
    } finally {
      entry.inUse--;
      entry.lastUsedAt = this.#clock.now().getTime();
      if (entry.retired && entry.inUse === 0) this.#end(entry);
    }
  }

  #entry(key: string, settings: string, open: (signal: AbortSignal) => Promise<McpSession>): Entry {
    const existing = this.#entries.get(key);
    if (existing?.settings === settings) return existing;
    if (existing) {
      this.#entries.delete(key);
      existing.retired = true;
      if (existing.inUse === 0) this.#end(existing);
    }
    const abort = new AbortController();
    const entry: Entry = {
      settings,
      retired: false,
      abort,
      opening: open(abort.signal).then(
        (session) => {
          entry.session = session;
          return session;
        },
        (error: unknown) => {
          // Nothing was opened: the next use tries again.
          if (this.#entries.get(key) === entry) this.#entries.delete(key);
          throw error;
        },
      ),
      inUse: 0,
      lastUsedAt: this.#clock.now().getTime(),
    };
    this.#entries.set(key, entry);
    return entry;
  }

  /** Ends a retired entry's session, or aborts its opening. */
  #end(entry: Entry): void {
    if (!entry.session) entry.abort.abort();
    const done = entry.opening
      .then(
        (session) => session.close(),
        () => undefined,
      )
      .finally(() => this.#closing.delete(done));
    this.#closing.add(done);
  }

  #drop(key: string, entry: Entry, how: 'close' | 'discard'): void {
    if (this.#entries.get(key) !== entry) return;
    this.#entries.delete(key);
    const session = entry.session;
    if (!session) return;
    const done = (how === 'close' ? session.close() : session.discard()).finally(() => {
      this.#closing.delete(done);
    });
    this.#closing.add(done);
  }

  /** Ends the key's session (a `DELETE`), if one is open; one being opened is ended once open. */
  async close(key: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (!entry) return this.#settled();
    this.#entries.delete(key);
    if (!entry.session) entry.abort.abort();
    const session = await entry.opening.catch(() => undefined);
    await session?.close();
    await this.#settled();
  }

  /** Ends the sessions unused for the idle time; resolves when their `DELETE`s are done. */
  async closeIdle(): Promise<void> {
    const now = this.#clock.now().getTime();
    for (const [key, entry] of this.#entries)
      if (entry.session && entry.inUse === 0 && now - entry.lastUsedAt >= this.#idleMs)
        this.#drop(key, entry, 'close');
    await this.#settled();
  }

  /** Ends every session and stops looking for idle ones: the Mesh is closing. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.all(this.keys().map((key) => this.close(key)));
    await this.#settled();
  }

  async #settled(): Promise<void> {
    await Promise.all([...this.#closing]);
  }
}
