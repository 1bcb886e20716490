import type { JsonObject } from '../model/json.ts';
import type { StepRecord, ToolCallStep } from '../run/records.ts';

/** One line of the ledger: what a call actually came to, from the store's own records. */
export interface LedgerEntry {
  readonly callId: string;
  readonly tool: string;
  readonly outcome: 'committed' | 'refused' | 'unavailable' | 'unknown' | 'failed' | 'errored';
  readonly detail: string;
}

function memoryLine(data: JsonObject): string | undefined {
  const m = (key: string) => data[key] as { id?: string; content?: string } | undefined;
  const remembered = m('remembered');
  if (remembered?.id)
    return `remembered memory ${remembered.id}: ${JSON.stringify(remembered.content ?? '')}`;
  const amended = m('amended');
  const superseded = m('superseded');
  if (amended?.id && superseded?.id) {
    return `memory ${superseded.id} was superseded by memory ${amended.id}: ${JSON.stringify(amended.content ?? '')}`;
  }
  const forgotten = m('forgotten');
  if (forgotten?.id) return `forgot memory ${forgotten.id}`;
  const memories = data['memories'];
  if (Array.isArray(memories))
    return `recalled ${memories.length} memor${memories.length === 1 ? 'y' : 'ies'} (nothing changed)`;
  return undefined;
}

/**
 * Builds the ledger from persisted steps: each call's recorded class, commit stamp and
 * observation — what the store returned — never the arguments the model asked with.
 */
export function ledgerEntries(steps: readonly StepRecord[]): LedgerEntry[] {
  const calls = new Map<string, ToolCallStep>();
  const entries: LedgerEntry[] = [];
  for (const step of steps) {
    if (step.kind === 'tool_call' && step.callId) calls.set(step.callId, step);
    if (step.kind !== 'observation' || !step.callId) continue;
    const call = calls.get(step.callId);
    const tool = step.toolName || call?.toolName || '?';
    const observation = step.observation;
    const kind = observation['kind'];
    const base = { callId: step.callId, tool };
    if (call?.status === 'failed') {
      entries.push({ ...base, outcome: 'failed', detail: 'the call failed' });
    } else if (kind === 'invalid_input' || kind === 'unknown_tool' || kind === 'not_run') {
      entries.push({
        ...base,
        outcome: 'refused',
        detail:
          kind === 'unknown_tool'
            ? 'no such tool; nothing ran'
            : kind === 'not_run'
              ? 'not run: the run stopped before it; nothing ran'
              : 'arguments refused; nothing ran',
      });
    } else if (kind === 'tool_error') {
      entries.push({
        ...base,
        outcome: 'errored',
        detail: 'the tool ran and reported an error (its result says what)',
      });
    } else if (kind === 'unavailable') {
      entries.push({
        ...base,
        outcome: 'unavailable',
        detail: 'the provider was unreachable; nothing changed',
      });
    } else if (kind === 'unknown_outcome') {
      entries.push({
        ...base,
        outcome: 'unknown',
        detail:
          'interrupted after it was committed; it may or may not have taken effect and was not repeated',
      });
    } else {
      const data = observation['data'];
      const memory =
        typeof data === 'object' && data !== null && !Array.isArray(data)
          ? memoryLine(data as JsonObject)
          : undefined;
      const effect = call?.committedAt
        ? `effect recorded at the commit boundary (${call.effect?.class ?? 'effect'})`
        : undefined;
      entries.push({ ...base, outcome: 'committed', detail: memory ?? effect ?? 'completed' });
    }
  }
  return entries;
}

/** The ledger as the system message the next request carries. */
export function renderLedger(entries: readonly LedgerEntry[]): string {
  const lines = entries.map((e) => `- ${e.tool} (${e.callId}): ${e.outcome} — ${e.detail}`);
  return [
    'Authoritative ledger of this turn, built from what Mesh recorded and its store returned (not from what was asked):',
    ...lines,
    'Your reply must agree with this ledger: claim only what it shows as committed, and say plainly what was refused, unavailable, errored, failed or unknown.',
  ].join('\n');
}
