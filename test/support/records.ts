import type { RunRecord } from '../../src/run/records.ts';

const AT = new Date('2026-01-01T00:00:00Z');

/** A run's row as the store returns it: a finished turn, with `overrides` on top. */
export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    agentId: '00000000-0000-4000-8000-000000000002',
    conversationId: null,
    inboundMessageId: null,
    kind: 'turn',
    status: 'succeeded',
    reason: null,
    provenance: {},
    budget: {},
    usage: {},
    checkpoint: {},
    leaseOwner: null,
    leaseEpoch: 1,
    leaseExpiresAt: null,
    interruptions: 0,
    committedAt: AT,
    createdAt: AT,
    startedAt: AT,
    finishedAt: AT,
    ...overrides,
  };
}
