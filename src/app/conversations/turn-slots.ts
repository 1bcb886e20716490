import { MeshError } from '../../tool/errors.ts';

/** How many turns one process drives at once unless MESH_TURN_CONCURRENCY says otherwise. */
export const DEFAULT_TURN_CONCURRENCY = 32;

/**
 * The turns one process drives at once. A message past the limit waits for a slot before it is
 * recorded (its request is not answered yet, so nothing acknowledged is lost): without a bound,
 * hundreds of turns at once shared one event loop so thinly that none could renew its lease in
 * time, and every run was handed over (bench:tenants at 500 agents).
 */
export class TurnSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    this.#free = limit;
  }

  /** Turns waiting for a slot now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, so a newcomer cannot jump the queue.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/** MESH_TURN_CONCURRENCY, a whole number from 1 to 10000, or the default. */
export function turnConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['MESH_TURN_CONCURRENCY']?.trim();
  if (raw === undefined || raw === '') return DEFAULT_TURN_CONCURRENCY;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 10_000)
    throw new MeshError(
      'config_invalid',
      'MESH_TURN_CONCURRENCY must be a whole number from 1 to 10000',
    );
  return n;
}
