import type { Mesh } from '../app/mesh.ts';
import { runBrowserSessions, runDraft, runNotes, type RunNoteRow } from '../app/runs/reads.ts';
import type {
  BrowserSessionRecord,
  OutboundEventRecord,
  RunDraft,
  RunRecord,
  StepRecord,
} from '../app/records.ts';
import { runEffects } from '../app/runs/outbound-view.ts';

/*
 * What a live stream sends beside a run's steps, read again on each tick and sent only when it
 * changed: the reply's draft while the model writes it, the run's outbound events, and its browser
 * sessions (where to watch one live, its recording once released).
 */

/**
 * What one stream has sent of a run's draft (the reply's text while the model writes it), so each
 * read sends only what is new: a `delta` event `{run_id, round, attempt, text, reset}`, `text`
 * appended to what was sent, or replacing it when `reset` (a new round or attempt, or the first
 * the stream sends). A draft whose round already has its response is over and never sent.
 */
export class DraftFollower {
  private sent: RunDraft | undefined;
  private answered = 0;
  constructor(private readonly runId: string) {}

  /**
   * Whether the model may be writing now: the last step seen asked it (or none was seen yet).
   * Only then is the draft read.
   */
  private asking = true;

  /** A step the stream sent: a model response ends its round's draft. */
  saw(step: StepRecord): void {
    this.asking = step.kind === 'model_request';
    const round = step.kind === 'model_response' ? step.data.round : undefined;
    if (typeof round === 'number') this.answered = Math.max(this.answered, round);
  }

  /** The `delta` event to send now for `run` (as just read), if any. */
  async next(mesh: Mesh, run: RunRecord): Promise<Record<string, unknown> | undefined> {
    if (!this.asking || (run.status !== 'queued' && run.status !== 'running')) return undefined;
    const draft = await runDraft(mesh, this.runId);
    const spent = run.usage['rounds'];
    const rounds = typeof spent === 'number' ? spent : 0;
    if (!draft || draft.round <= Math.max(rounds, this.answered)) return undefined;
    const sent = this.sent;
    this.sent = draft;
    const event = { run_id: this.runId, round: draft.round, attempt: draft.attempt };
    if (
      sent &&
      sent.round === draft.round &&
      sent.attempt === draft.attempt &&
      draft.body.startsWith(sent.body)
    ) {
      const text = draft.body.slice(sent.body.length);
      return text === '' ? undefined : { ...event, text, reset: false };
    }
    return { ...event, text: draft.body, reset: true };
  }
}

/**
 * Rows of a run a stream has sent (its outbound events, its browser sessions), so each read sends
 * only the new ones and those whose `mark` changed.
 */
export class RowFollower<T extends { readonly id: string }> {
  private readonly sent = new Map<string, string>();
  constructor(
    private readonly read: () => Promise<readonly T[]>,
    private readonly mark: (row: T) => string,
  ) {}

  async changed(): Promise<T[]> {
    const changed: T[] = [];
    for (const row of await this.read()) {
      const mark = this.mark(row);
      if (this.sent.get(row.id) === mark) continue;
      this.sent.set(row.id, mark);
      changed.push(row);
    }
    return changed;
  }
}

/** The run's outbound events, sent again when their delivery changes. */
export function effectFollower(mesh: Mesh, runId: string): RowFollower<OutboundEventRecord> {
  return new RowFollower(
    () => runEffects(mesh, runId),
    (e) => `${e.state}:${e.attempts}:${e.updatedAt.getTime()}`,
  );
}

/** The run's browser sessions, sent again when their state, live view or recording changes. */
export function browserFollower(mesh: Mesh, runId: string): RowFollower<BrowserSessionRecord> {
  return new RowFollower(
    () => runBrowserSessions(mesh, runId),
    (s) => `${s.state}:${s.liveViewUrl ?? ''}:${s.recordingArtifactId ?? ''}`,
  );
}

/** The run's progress notes (its own and the browser's Live View notes), each sent once. */
export function noteFollower(mesh: Mesh, runId: string): RowFollower<RunNoteRow> {
  return new RowFollower(
    () => runNotes(mesh, runId),
    () => 'posted',
  );
}
