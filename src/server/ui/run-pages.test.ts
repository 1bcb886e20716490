import { describe, expect, it } from 'vitest';
import type { RunRecord, StepRecord } from '../../app/records.ts';
import { runPage } from './run-pages.ts';

const run: RunRecord = {
  id: '00000000-0000-4000-8000-000000000001',
  agentId: 'a',
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
  leaseEpoch: 0,
  leaseExpiresAt: null,
  committedAt: null,
  createdAt: new Date(0),
  startedAt: null,
  finishedAt: null,
};

const request = (loading: Record<string, unknown>): StepRecord => ({
  runId: run.id,
  seq: 1,
  kind: 'model_request',
  status: 'completed',
  startedAt: new Date(0),
  finishedAt: new Date(0),
  data: { round: 2, estimate: {}, offered: ['tool_search'], withheld: [], loading } as never,
});

describe('the run page', () => {
  it("shows a request's tool loading: the index, both figures, and what changed with why", () => {
    const page = runPage({ csrf: 't' }, undefined, run, [
      request({
        index: true,
        allTokens: 11920,
        indexTokens: 1169,
        shareTokens: 3744,
        loadedTokens: 800,
        loaded: [{ name: 'gh__create_pull_request', query: 'open a <PR>' }],
        unloaded: [{ name: 'slack__post', reason: 'least recently used' }],
        refused: [{ name: 'gh__merge', reason: 'it is no longer granted to you' }],
      }),
    ]);
    expect(page).toContain('data-index="yes"');
    expect(page).toContain('carrying every schema 11920 tokens, the index');
    expect(page).toContain('1169; loaded 800 of a 3744-token share');
    expect(page).toContain(
      'loaded <code>gh__create_pull_request</code> — searched for “open a &lt;PR&gt;”',
    );
    expect(page).toContain('unloaded <code>slack__post</code> — least recently used');
    expect(page).toContain('refused <code>gh__merge</code> — it is no longer granted to you');
  });

  it('says when every schema was carried', () => {
    const page = runPage({ csrf: 't' }, undefined, run, [
      request({ index: false, allTokens: 81, indexTokens: 159 }),
    ]);
    expect(page).toContain('data-index="no"');
    expect(page).toContain('<strong>all schemas</strong>');
  });
});
