import * as usage from '../../store/usage.ts';
import type { Mesh } from '../mesh.ts';

/* What the usage page and `mesh usage` read: runs, tokens, failures and tool latency over days. */

export function usageByDay(mesh: Mesh, days: number): Promise<usage.UsageDay[]> {
  return usage.usageByDay(mesh.db, days);
}

export function failuresByReason(
  mesh: Mesh,
  days: number,
  limit: number,
): Promise<usage.FailureCount[]> {
  return usage.failuresByReason(mesh.db, days, limit);
}

export function slowestTools(
  mesh: Mesh,
  days: number,
  limit: number,
): Promise<usage.ToolLatency[]> {
  return usage.slowestTools(mesh.db, days, limit);
}
