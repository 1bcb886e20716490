/** Median of a list of numbers (the list is sorted in place). */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** The p-th percentile (nearest rank) of a list of numbers (sorted in place). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  const rank = Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1));
  return values[rank] ?? Number.NaN;
}

/**
 * Times `fn` in batches and returns the nanoseconds per call of each batch, so that the timer's
 * own resolution and cost are spread over `batch` calls.
 */
export async function nsPerCall(
  fn: () => unknown,
  options: { batches: number; batch: number; warmup: number },
): Promise<number[]> {
  for (let i = 0; i < options.warmup; i++) await fn();
  const samples: number[] = [];
  for (let b = 0; b < options.batches; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < options.batch; i++) await fn();
    samples.push(Number(process.hrtime.bigint() - start) / options.batch);
  }
  return samples;
}
