import { apiKeyVersion, backendClients, sharedByRun, type BackendClients } from './rented.ts';
import type { BrowserBackend, CdpEndpoint, SessionRecording } from '../../browser/backend.ts';
import { formatSeconds } from '../../run/budget.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import {
  getBrowserBackend,
  liveBrowserSessionOfRun,
  markBrowserSessionEnded,
  orphanedBrowserSessions,
  setBrowserSessionHolder,
  type BrowserBackendRecord,
  type BrowserSessionRecord,
} from '../../store/browsers.ts';
import type { Db } from '../../store/db.ts';
import { getRun } from '../../store/runs.ts';
import {
  BrowserUnavailableError,
  type Browsers,
  type MeteredBrowserPage,
} from '../../tool/browser.ts';
import type { ToolContext } from '../../tool/context.ts';
import { hasCode } from '../../tool/errors.ts';
import type { Redactor } from '../../tool/redaction.ts';
import { browserBackendFor } from './browser-backends.ts';
import {
  keepRecording,
  meter,
  provision,
  reattach,
  storeRecording,
  type Held,
  type RentalDeps,
} from './browser-rental.ts';

/**
 * The browser layer as the rest of Mesh uses it: hands a call its run's browser session (rented
 * on the run's first browser call from the backend the agent was granted, driven over CDP),
 * meters the session's time against the run's budget, and releases sessions when their run ends
 * or dies.
 */
export interface BrowserRuntime extends Browsers {
  /**
   * Ends the run's browser session. `live` false says the database holds none for it (its end
   * said so): only one this process still holds is let go of, without a read.
   */
  releaseRun(runId: string, reason: string, live?: boolean): Promise<void>;
  /** Releases every session whose run died (ended, or its holder's lease lapsed). */
  reap(graceMs?: number): Promise<number>;
  /** Releases what this process holds and ends its backends' connections. */
  close(): Promise<void>;
  /**
   * Where Mesh's own Live View connects to a live session (a local one, whose browser this
   * machine reaches); undefined when the session is not live or its backend cannot reconnect.
   */
  liveViewEndpoint(session: BrowserSessionRecord): Promise<CdpEndpoint | undefined>;
}

/** How long past its lease a run's session is kept for a holder that is only slow. */
export const BROWSER_REAP_GRACE_MS = 30_000;

/** The runs' browser sessions this process holds, rented and released. */
class BrowserSessions implements BrowserRuntime {
  readonly #db: Db;
  readonly #held = new Map<string, Held>();
  /** Backend clients, by backend row, settings and key version (either changed: a new client). */
  readonly #backends: BackendClients<BrowserBackendRecord, BrowserBackend>;
  readonly #rental: RentalDeps;
  /** Renting in flight, by run: concurrent first calls share one. */
  readonly #shared = sharedByRun<Held>();

  constructor(deps: { db: Db; secrets: SecretStore; redactor: Redactor }) {
    this.#db = deps.db;
    this.#backends = backendClients(
      (record: BrowserBackendRecord) => browserBackendFor(record, deps.secrets),
      apiKeyVersion(deps.secrets, 'browser_backend'),
    );
    this.#rental = {
      db: deps.db,
      redactor: deps.redactor,
      backendOf: (record) => this.#backends.of(record),
    };
  }

  async forCall(ctx: ToolContext): Promise<MeteredBrowserPage> {
    // Checked before each call's one action: a spent budget ends the session, not the call.
    const { leftMs, budgetMinutes } = await meter(this.#db, ctx.runId);
    if (leftMs <= 0) await this.#exhausted(ctx.runId, budgetMinutes);
    const h = await this.#shared(ctx.runId, () => this.#acquire(ctx));
    // The session's page for one call (each call is one action, checked against the meter).
    return {
      navigate: (url) => h.session.navigate(url),
      read: (mode) => h.session.read(mode),
      act: (action) => h.session.act(action),
      screenshot: (fullPage) => h.session.screenshot(fullPage),
      meter: async () => (await meter(this.#db, ctx.runId)).uncountedMs,
    };
  }

  async handoff({ runId }: { runId: string }): Promise<{ sessionId: string; link: string }> {
    const live = await liveBrowserSessionOfRun(this.#db, runId);
    if (!live || live.state !== 'ready')
      throw new BrowserUnavailableError(
        'no_session',
        'the run has no browser session open: open the page a person should act on (browser_navigate), then hand it over',
      );
    if (live.liveViewUrl === null) {
      const row = await getBrowserBackend(this.#db, live.backendId);
      throw new BrowserUnavailableError(
        'no_live_view',
        `browser backend ${row?.name ?? live.backendId} offers no live view, so no one could take the session over`,
      );
    }
    return { sessionId: live.id, link: live.liveViewUrl };
  }

  async liveViewEndpoint(session: BrowserSessionRecord): Promise<CdpEndpoint | undefined> {
    if (!['ready', 'awaiting_human'].includes(session.state) || session.externalId === null)
      return undefined;
    const row = await getBrowserBackend(this.#db, session.backendId);
    if (!row || row.kind !== 'local') return undefined;
    const backend = await this.#backends.of(row);
    return backend.attach?.(session.externalId).catch(() => undefined);
  }

  async releaseRun(runId: string, reason: string, known?: boolean): Promise<void> {
    const live = known === false ? undefined : await liveBrowserSessionOfRun(this.#db, runId);
    if (live) await this.#end(live, reason);
    else {
      const mine = this.#held.get(runId);
      this.#held.delete(runId);
      await mine?.session.disconnect();
    }
  }

  async reap(graceMs = BROWSER_REAP_GRACE_MS): Promise<number> {
    let released = 0;
    for (const orphan of await orphanedBrowserSessions(this.#db, graceMs)) {
      try {
        await this.#end(orphan, 'reaped: its run ended or its holder is gone');
        released++;
      } catch (error) {
        if (!hasCode(error, 'browser_backend_unavailable')) throw error;
      }
    }
    return released;
  }

  async close(): Promise<void> {
    for (const [runId, h] of this.#held) {
      this.#held.delete(runId);
      await h.session.disconnect();
      if (h.record.externalId !== null)
        await h.backend.release(h.record.externalId).catch(() => undefined);
      await markBrowserSessionEnded(
        this.#db,
        h.record.id,
        'released',
        'the process holding it stopped',
      );
    }
    await this.#backends.closeAll((backend) => backend.close());
  }

  async #end(record: BrowserSessionRecord, reason: string): Promise<void> {
    const mine = this.#held.get(record.runId);
    let backend: BrowserBackend | undefined;
    let journal: SessionRecording | undefined;
    if (mine && mine.record.id === record.id) {
      this.#held.delete(record.runId);
      journal = mine.session.journal();
      await mine.session.disconnect();
      backend = mine.backend;
    } else if (record.externalId !== null) {
      const row = await getBrowserBackend(this.#db, record.backendId);
      backend = row && (await this.#backends.of(row).catch(() => undefined));
    }
    if (backend && record.externalId !== null) await backend.release(record.externalId);
    await markBrowserSessionEnded(this.#db, record.id, 'released', reason);
    if (journal) await storeRecording(this.#rental, record, journal);
    else if (backend && record.externalId !== null)
      await keepRecording(this.#rental, backend, record);
  }

  async #acquire(ctx: ToolContext): Promise<Held> {
    const held = this.#held;
    const run = await getRun(this.#db, ctx.runId);
    if (!run) throw new BrowserUnavailableError('no_backend', `run ${ctx.runId} does not exist`);
    const holder = run.leaseOwner ?? `process:${process.pid}`;
    const live = await liveBrowserSessionOfRun(this.#db, ctx.runId);
    const mine = held.get(ctx.runId);
    if (live && mine && mine.record.id === live.id) {
      if (live.holder === holder) return mine;
      // This process still drives the session; the run's new lease holds it from now on.
      const record = (await setBrowserSessionHolder(this.#db, live.id, holder)) ?? mine.record;
      const kept = { ...mine, record };
      held.set(ctx.runId, kept);
      return kept;
    }
    if (live && live.state === 'ready') {
      if (mine) {
        held.delete(ctx.runId);
        await mine.session.disconnect();
      }
      const attached = await reattach(this.#rental, ctx, live, holder);
      if (attached) {
        held.set(ctx.runId, attached);
        return attached;
      }
    }
    // A session no one can reconnect to (its backend cannot, or its browser is gone) is
    // released, and this holder rents a new one: the page it was on is lost with it.
    if (live) await this.#end(live, 'superseded: the run moved to another holder');
    if (mine) {
      held.delete(ctx.runId);
      await mine.session.disconnect();
    }
    const fresh = await provision(this.#rental, ctx, holder);
    held.set(ctx.runId, fresh);
    return fresh;
  }

  /** Ends the run's session because its time is spent, refusing the call that found it so. */
  async #exhausted(runId: string, budgetMinutes: number): Promise<never> {
    const live = await liveBrowserSessionOfRun(this.#db, runId);
    if (live) await this.#end(live, 'the run’s browser session time is spent');
    throw new BrowserUnavailableError(
      'session_time_exhausted',
      `browser session time (${formatSeconds(budgetMinutes * 60)}) spent; the session was released`,
      { meteredMs: (await meter(this.#db, runId)).uncountedMs },
    );
  }
}

/** The browser layer over `deps` (see {@link BrowserRuntime}). */
export function createBrowserRuntime(deps: {
  db: Db;
  secrets: SecretStore;
  redactor: Redactor;
}): BrowserRuntime {
  return new BrowserSessions(deps);
}
