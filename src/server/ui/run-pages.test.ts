import { describe, expect, it } from 'vitest';
import type { OutboundEventRecord, RunRecord, StepRecord } from '../../app/records.ts';
import { runRecord } from '../../../test/support/records.ts';
import { runPage } from './run-pages.ts';

const at = new Date('2026-01-01T00:00:00Z');
const run: RunRecord = runRecord();

const request = (loading: Record<string, unknown>): StepRecord => ({
  runId: run.id,
  seq: 1,
  kind: 'model_request',
  status: 'completed',
  startedAt: new Date(0),
  finishedAt: new Date(0),
  data: { round: 2, estimate: {}, offered: ['tool_search'], withheld: [], loading } as never,
});

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
    expect(page).toContain('<h2>Outbound events</h2>');
    expect(page).toContain('<code>linear.issue_create</code>');
    expect(page).toContain('href="https://linear.app/acme/issue/ENG-1"');
    expect(page).toContain('data-state="unknown"');
    expect(page).toContain('an attempt was made but its answer was lost');
    expect(page).not.toContain('javascript:');
  });

  it('shows no effects section for a run without effects', () => {
    expect(runPage({ csrf: 'x' }, undefined, run, [])).not.toContain('Outbound events');
  });

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

describe('a run page follows its run only while it is live', () => {
  const session = { csrf: 'c' };
  it('loads the live script and names the stream after the last step for a running run', () => {
    const page = runPage(session, undefined, { ...run, status: 'running' }, [request({})]);
    expect(page).toContain('<script src="/assets/live.js" defer></script>');
    expect(page).toContain(`data-events="/runs/${run.id}/events" data-after="1"`);
    expect(page).toContain('data-seq="1"');
  });

  it('is a plain page once the run has ended', () => {
    const page = runPage(session, undefined, run, [request({})]);
    expect(page).not.toContain('<script');
    expect(page).not.toContain('data-events');
  });
});
