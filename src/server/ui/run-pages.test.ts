import { describe, expect, it } from 'vitest';
import type { OutboundEventRecord, RunRecord } from '../../app/records.ts';
import { runPage } from './run-pages.ts';

const at = new Date('2026-01-01T00:00:00Z');
const run: RunRecord = {
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
  committedAt: at,
  createdAt: at,
  startedAt: at,
  finishedAt: at,
};

function effect(overrides: Partial<OutboundEventRecord>): OutboundEventRecord {
  return {
    id: '00000000-0000-4000-8000-000000000003',
    idempotencyKey: 'k'.repeat(64),
    runId: run.id,
    stepSeq: 4,
    callId: 'c1',
    toolName: 'create_linear_issue',
    kind: 'linear.issue_create',
    target: 'team ENG',
    payload: {},
    state: 'delivered',
    attempts: 1,
    lastError: null,
    externalId: 'issue-1',
    link: 'https://linear.app/acme/issue/ENG-1',
    result: null,
    reconciles: true,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

describe('the run page', () => {
  it("lists each effect's delivery state, attempts and external id, linking only http(s)", () => {
    const page = runPage({ csrf: 'x' }, undefined, run, [], new Map(), [
      effect({}),
      effect({
        id: '00000000-0000-4000-8000-000000000004',
        kind: 'slack.chat_post_message',
        target: 'channel #ops',
        state: 'unknown',
        lastError: 'an attempt was made but its answer was lost',
        externalId: null,
        link: 'javascript:alert(1)',
        reconciles: false,
      }),
    ]);
    expect(page).toContain('<h2>Effects</h2>');
    expect(page).toContain('<code>linear.issue_create</code>');
    expect(page).toContain('href="https://linear.app/acme/issue/ENG-1"');
    expect(page).toContain('data-state="unknown"');
    expect(page).toContain('an attempt was made but its answer was lost');
    expect(page).not.toContain('javascript:');
  });

  it('shows no effects section for a run without effects', () => {
    expect(runPage({ csrf: 'x' }, undefined, run, [])).not.toContain('Effects');
  });
});
