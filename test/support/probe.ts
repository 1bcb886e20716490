import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `work` while sending `probe` (a request answering its HTTP status) again and again; returns
 * the probes' and the event loop's worst delay, and how many probes failed (not 200, or no answer).
 */
export async function whileProbing(
  probe: () => Promise<number>,
  work: () => Promise<void>,
): Promise<{ latencyMs: number; stallMs: number; probes: number; failed: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  let done = false;
  const latencies: number[] = [];
  let failed = 0;
  const probing = (async () => {
    while (!done) {
      const started = performance.now();
      // A long stall also drops kept-alive connections: a probe that fails counts as one.
      const status = await probe().catch(() => 0);
      latencies.push(performance.now() - started);
      if (status !== 200) failed++;
    }
  })();
  histogram.enable();
  try {
    await work();
  } finally {
    done = true;
    histogram.disable();
    await probing;
  }
  return {
    latencyMs: Math.max(...latencies),
    stallMs: histogram.max / 1e6,
    probes: latencies.length,
    failed,
  };
}
