/**
 * Where Mesh reads the time. Injected (through the Mesh object and the run drivers) so that a
 * test can move time — a budget's wall clock, a catalog's freshness — without sleeping.
 */
export interface Clock {
  now(): Date;
}

/** The system's clock: the default everywhere a clock is not handed in. */
export const systemClock: Clock = Object.freeze({ now: () => new Date() });

/** A clock that moves only when told: for tests of deadlines and freshness. */
export function manualClock(start: Date = new Date(0)): Clock & { advance(ms: number): void } {
  let at = start.getTime();
  return {
    now: () => new Date(at),
    advance(ms: number) {
      at += ms;
    },
  };
}
