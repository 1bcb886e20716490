import type { Definition } from './definition.ts';
import type { Observation } from './observation.ts';

/** What a call observer is told when a handler's call ends: for metrics, never arguments. */
export interface CallObservation {
  readonly tool: string;
  readonly toolClass: string;
  /** The observation's kind (`result`, `tool_error`, …), or `fatal` when the handler failed. */
  readonly outcome: string;
  readonly seconds: number;
}

let callObserver: ((call: CallObservation) => void) | undefined;

/** The observer of every handler call (the metrics set-up's), or undefined: then nothing is timed. */
export function observedCalls(): ((call: CallObservation) => void) | undefined {
  return callObserver;
}

/** Sets (or clears) the call observer; returns the way back to the previous one. */
export function observeCalls(observer: ((call: CallObservation) => void) | undefined): () => void {
  const previous = callObserver;
  callObserver = observer;
  return () => {
    callObserver = previous;
  };
}

/** A call timed for its observer (metrics): how long the handler took and what it came to. */
export async function timedCall<T extends { readonly observation: Observation }>(
  observer: (call: CallObservation) => void,
  definition: Definition,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let outcome = 'fatal';
  try {
    const result = await run();
    outcome = result.observation.kind;
    return result;
  } finally {
    observer({
      tool: definition.tool.name,
      toolClass: definition.class,
      outcome,
      seconds: (performance.now() - started) / 1000,
    });
  }
}
