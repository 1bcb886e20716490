import { randomUUID } from 'node:crypto';
import type { BrowserProvisionSpec } from '../../src/browser/backend.ts';

/**
 * What the browser tests rent a session with: fresh ids (or `id` for all three, as a vendor fake
 * names its own), an hour's vendor timeout, and a grant that allows loopback, where the test sites
 * listen.
 */
export function loopbackSession(
  options: { readonly id?: string; readonly timeoutMs?: number } = {},
): BrowserProvisionSpec {
  return {
    sessionId: options.id ?? randomUUID(),
    runId: options.id ?? randomUUID(),
    agentId: options.id ?? randomUUID(),
    timeoutMs: options.timeoutMs ?? 60_000,
    egress: { allowLoopback: true },
  };
}
