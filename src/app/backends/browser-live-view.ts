import type { Screencast } from '../../browser/backends/screencast.ts';
import {
  SCREEN_KEYS,
  type ScreenFrame,
  type ScreenInput,
  type ScreenKey,
} from '../../browser/screen-input.ts';
import {
  getBrowserSession,
  isSessionParticipant,
  markBrowserSessionTakenOver,
  type BrowserSessionRecord,
} from '../../store/browsers.ts';
import type { Db } from '../../store/db.ts';
import { MeshError } from '../../tool/errors.ts';
import { InvalidInputError } from '../operations/input.ts';
import type { BrowserRuntime } from './browsers.ts';

/** A person watching a session through Mesh's own Live View. */
export interface LiveViewer {
  readonly session: BrowserSessionRecord;
  /** Calls `fn` with each frame of the session's screen; returns how to stop. */
  onFrame(fn: (frame: ScreenFrame) => void): () => void;
  /** Whether the connection to the session's browser was lost (it was released, or died). */
  readonly lost: boolean;
  /** Stops watching (the last viewer of a session ends its screencast). */
  leave(): Promise<void>;
}

/**
 * Mesh's own Live View of the sessions whose browser this machine reaches (local Chromium): one
 * screencast per session, shared by everyone watching it, and a person's input relayed to the
 * page while the run has handed its browser to its conversation. Only the conversation's
 * participants watch or act, and the first to act is who the takeover is attributed to.
 */
export interface LiveViews {
  /** The session, when `actor` may watch it (a participant of its run's conversation). */
  session(sessionId: string, actor: string): Promise<BrowserSessionRecord>;
  watch(sessionId: string, actor: string): Promise<LiveViewer>;
  input(sessionId: string, actor: string, event: ScreenInput): Promise<void>;
  close(): Promise<void>;
}

export function createLiveViews(deps: { db: Db; browsers: BrowserRuntime }): LiveViews {
  const { db } = deps;
  const open = new Map<string, { cast: Promise<Screencast>; viewers: number }>();

  async function permitted(sessionId: string, actor: string): Promise<BrowserSessionRecord> {
    const session = await getBrowserSession(db, sessionId);
    if (!session)
      throw new MeshError('browser_session_not_found', 'no browser session with that id');
    if (!(await isSessionParticipant(db, session.id, actor)))
      throw new MeshError(
        'not_a_participant',
        `only the participants of the conversation of browser session ${session.id.slice(0, 8)}'s run may watch or take it over`,
      );
    return session;
  }

  /** The session's shared screencast, started by its first viewer. */
  async function cast(session: BrowserSessionRecord): Promise<Screencast> {
    const held = open.get(session.id);
    if (held) {
      const existing = await held.cast.catch(() => undefined);
      if (existing && !existing.closed) return existing;
      open.delete(session.id);
    }
    const endpoint = await deps.browsers.liveViewEndpoint(session);
    if (!endpoint)
      throw new MeshError(
        'live_view_unavailable',
        `browser session ${session.id.slice(0, 8)} has no live view here: it ended, or its backend serves its own`,
      );
    const { startScreencast } = await import('../../browser/backends/screencast.ts');
    const started = startScreencast(endpoint);
    open.set(session.id, { cast: started, viewers: 0 });
    try {
      return await started;
    } catch (error) {
      open.delete(session.id);
      throw new MeshError(
        'live_view_unavailable',
        `browser session ${session.id.slice(0, 8)}'s browser could not be reached for its live view`,
        undefined,
        { cause: error },
      );
    }
  }

  async function leave(sessionId: string): Promise<void> {
    const held = open.get(sessionId);
    if (!held) return;
    held.viewers -= 1;
    await closeUnwatched(sessionId);
  }

  async function closeUnwatched(sessionId: string): Promise<void> {
    const held = open.get(sessionId);
    if (!held || held.viewers > 0) return;
    open.delete(sessionId);
    const screencast = await held.cast.catch(() => undefined);
    await screencast?.close();
  }

  return {
    session: permitted,
    async watch(sessionId, actor) {
      const session = await permitted(sessionId, actor);
      const screencast = await cast(session);
      const held = open.get(session.id);
      if (held) held.viewers += 1;
      let left = false;
      return {
        session,
        onFrame: (fn) => screencast.onFrame(fn),
        get lost() {
          return screencast.closed;
        },
        async leave() {
          if (left) return;
          left = true;
          await leave(session.id);
        },
      };
    },

    async input(sessionId, actor, event) {
      const session = await permitted(sessionId, actor);
      // A person acts only while the run has handed the browser over: never beside the agent.
      if (!(await markBrowserSessionTakenOver(db, session.id, actor)))
        throw new MeshError(
          'not_handed_over',
          `browser session ${session.id.slice(0, 8)} is not handed over: people act in it only while its run waits on a handoff`,
        );
      const screencast = await cast(session);
      try {
        await screencast.input(event);
      } finally {
        // Input without a viewer (an API client) does not keep a screencast running.
        if (open.get(session.id)?.viewers === 0) await closeUnwatched(session.id);
      }
    },

    async close() {
      const all = [...open.values()];
      open.clear();
      for (const held of all) await (await held.cast.catch(() => undefined))?.close();
    },
  };
}

/** The most characters one relayed `text` input carries (a paste, a burst of typing). */
const MAX_TEXT = 2000;
const MAX_COORD = 20_000;

/**
 * A person's input as the Live View page posts it (`type` with its fields), checked: a click or
 * scroll at a point, text, or one of the named keys. Refused naming the field, never its value.
 */
export function screenInputFrom(form: (name: string) => string | null): ScreenInput {
  const coord = (name: string) => {
    const raw = form(name);
    const n = raw === null || raw.trim() === '' ? NaN : Number(raw);
    if (!Number.isFinite(n) || n < 0 || n > MAX_COORD)
      throw new InvalidInputError(
        `\`form.${name}\` must be a number from 0 to ${MAX_COORD}`,
        `form.${name}`,
      );
    return n;
  };
  switch (form('type')) {
    case 'click':
      return { kind: 'click', x: coord('x'), y: coord('y') };
    case 'scroll': {
      const dy = Number(form('dy') ?? '');
      if (!Number.isFinite(dy) || Math.abs(dy) > 5000)
        throw new InvalidInputError('`form.dy` must be a number from -5000 to 5000', 'form.dy');
      return { kind: 'scroll', x: coord('x'), y: coord('y'), dy };
    }
    case 'text': {
      const text = form('text') ?? '';
      if (text.length === 0 || text.length > MAX_TEXT)
        throw new InvalidInputError(
          `\`form.text\` must be 1 to ${MAX_TEXT} characters`,
          'form.text',
        );
      return { kind: 'text', text };
    }
    case 'key': {
      const key = form('key') ?? '';
      if (!Object.hasOwn(SCREEN_KEYS, key))
        throw new InvalidInputError(
          `\`form.key\` must be one of ${Object.keys(SCREEN_KEYS).join(', ')}`,
          'form.key',
        );
      return { kind: 'key', key: key as ScreenKey };
    }
    default:
      throw new InvalidInputError('`form.type` must be click, scroll, text or key', 'form.type');
  }
}
