import type { Definition } from './definition.ts';

/** The commit-boundary decision for one definition. */
export interface ToolEffect {
  /** A durable commit stamp must be written before the call runs. */
  readonly crossesCommitBoundary: boolean;
  /** What a resumed run does with a call that started but has no observation. */
  readonly onResume: 'reexecute' | 'report_unknown';
}

const REPLAYABLE: ToolEffect = Object.freeze({
  crossesCommitBoundary: false,
  onResume: 'reexecute',
});
const INTERNAL: ToolEffect = Object.freeze({ crossesCommitBoundary: false, onResume: 'reexecute' });
const COMMITTING: ToolEffect = Object.freeze({
  crossesCommitBoundary: true,
  onResume: 'report_unknown',
});
const AT_MOST_ONCE_QUERY: ToolEffect = Object.freeze({
  crossesCommitBoundary: false,
  onResume: 'report_unknown',
});

/**
 * The spec's rule, deliberately conservative: an effectful call of any non-query class crosses the
 * run's commit boundary before it runs and is never re-executed after a resume. `internal` (Mesh's
 * own writes, idempotent per call id) stays inside the boundary; `replayable` is run again. An
 * effectful query does not move the run past its boundary, but it is not repeated either.
 */
export function toolEffect(definition: Pick<Definition, 'class' | 'replay'>): ToolEffect {
  switch (definition.replay) {
    case 'replayable':
      return REPLAYABLE;
    case 'internal':
      return INTERNAL;
    case 'effectful':
      return definition.class === 'query' ? AT_MOST_ONCE_QUERY : COMMITTING;
    default: {
      const never: never = definition.replay;
      throw new Error(`unknown replay ${String(never)}`);
    }
  }
}

/**
 * Whether a call may be recorded after it ran, together with its observation in one write, instead
 * of ahead of it: a replayable query. If the process dies mid-call nothing is on record, and the
 * resumed run runs the query again, which is what `replayable` promises about the world. Every
 * other call is recorded before it runs (effectful ones with the write-ahead commit stamp).
 */
export function recordsAfterRun(definition: Pick<Definition, 'class' | 'replay'>): boolean {
  return definition.class === 'query' && definition.replay === 'replayable';
}
