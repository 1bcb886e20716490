import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorToken } from '../../src/app/operators/operator-auth.ts';
import { meshApp } from '../../src/server/server.ts';
import { runEventStream, StreamSlots } from '../../src/server/run-events.ts';
import { testDatabases } from '../support/db.ts';
import { outboundStore } from '../../src/store/outbound-events.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { heldRun as heldRunOf } from '../support/held-run.ts';
import { sseEvents, type SseEvent } from '../support/sse.ts';
import { scriptedAgent } from '../support/turn.ts';

/**
 * A run's live events over HTTP: the test drives a run step by step through the ledger (as a
 * worker on any replica would) and reads the stream as the steps land.
 */
describe.each(testDatabases())('live run events on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  let agentId: string;

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    agentId = await scriptedAgent(server.mesh, { rules: [], fallback: { content: 'Hi.' } }, 'ada');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  /** A run in a new conversation (or the one named), leased to the test: the test is its worker. */
  const heldRun = (inConversation?: string) =>
    heldRunOf(server.mesh.ledger, agentId, {
      owner: 'test-worker',
      ...(inConversation ? { conversationId: inConversation } : {}),
    });

  function open(runId: string, headers: Record<string, string> = {}, search = '') {
    return fetch(`${server.url}api/runs/${runId}/events${search}`, {
      headers: { authorization: `Bearer ${server.token}`, ...headers },
    });
  }

  /** The next event of a stream, failing if it ended first. */
  async function next(events: AsyncGenerator<SseEvent>): Promise<SseEvent> {
    const read = await events.next();
    if (read.done) throw new Error('the stream ended');
    return read.value;
  }

  it('sends steps in order as they land, progress, the reply and a final state, then ends; resumes after Last-Event-ID', async () => {
    const { lease, conversationId } = await heldRun();
    const { ledger } = server.mesh;
    await ledger.appendStep(lease, { kind: 'note', data: { n: 1 } });

    const res = await open(lease.runId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(res.body as ReadableStream<Uint8Array>);
    const opening = await next(events);
    expect(opening.event).toBe('state');
    expect(JSON.parse(opening.data)).toMatchObject({ status: 'running', final: false });
    const first = await next(events);
    expect([first.event, first.id]).toEqual(['step', '1']);
    expect(JSON.parse(first.data)).toMatchObject({ seq: 1, kind: 'note', data: { n: 1 } });

    // Written while the stream is open: it arrives without a new request.
    await ledger.appendStep(lease, { kind: 'note', data: { n: 2 } });
    const second = await next(events);
    expect([second.event, second.id]).toEqual(['step', '2']);

    await ledger.progress(lease, { usage: { modelCalls: 1 } });
    const progress = await next(events);
    expect(progress.event).toBe('progress');
    expect(JSON.parse(progress.data)).toMatchObject({ usage: { modelCalls: 1 } });

    await ledger.recordReply(lease, { conversationId, actor: 'agent:ada', body: 'Done.' });
    const step = await next(events);
    expect([step.event, step.id]).toEqual(['step', '3']);
    const reply = await next(events);
    expect([reply.event, reply.id]).toEqual(['reply', '3']);
    expect(JSON.parse(reply.data)).toMatchObject({ seq: 3, body: 'Done.' });

    // The reply is an outbound event of the run too, delivered as it was recorded.
    const delivered = await next(events);
    expect(delivered.event).toBe('effect');
    expect(JSON.parse(delivered.data)).toMatchObject({ step: 3, state: 'delivered' });

    await ledger.finish(lease, 'succeeded', null);
    const final = await next(events);
    expect(final.event).toBe('state');
    expect(JSON.parse(final.data)).toMatchObject({ status: 'succeeded', final: true });
    await expect(events.next()).resolves.toMatchObject({ done: true });

    // Reconnecting after step 2: only step 3 and its reply, then the final state.
    const resumed = await open(lease.runId, { 'last-event-id': '2' }, '?after=0');
    const rest: SseEvent[] = [];
    for await (const e of sseEvents(resumed.body as ReadableStream<Uint8Array>)) rest.push(e);
    expect(rest.map((e) => `${e.event}:${e.id ?? ''}`)).toEqual([
      'state:',
      'step:3',
      'reply:3',
      'effect:',
      'state:',
    ]);
    const byQuery = await open(lease.runId, {}, '?after=3');
    const tail: SseEvent[] = [];
    for await (const e of sseEvents(byQuery.body as ReadableStream<Uint8Array>)) tail.push(e);
    expect(tail.map((e) => e.event)).toEqual(['state', 'effect', 'state']);
  });

  it('wakes on a write this process makes to the run, not at its next poll', async () => {
    const { lease } = await heldRun();
    const run = await server.mesh.ledger.run(lease.runId);
    if (!run) throw new Error('no run');
    // Reads an hour apart: only the ledger's own announcement can bring the step in time.
    const res = runEventStream(server.mesh, run, {
      slots: new StreamSlots(),
      holder: 'test',
      after: 0,
      pollMs: 3_600_000,
    });
    const events = sseEvents(res.body as ReadableStream<Uint8Array>);
    expect((await next(events)).event).toBe('state');
    await server.mesh.ledger.appendStep(lease, { kind: 'note', data: { n: 1 } });
    const step = await next(events);
    expect([step.event, step.id]).toEqual(['step', '1']);
    await server.mesh.ledger.finish(lease, 'succeeded', null);
    const final = await next(events);
    expect(JSON.parse(final.data)).toMatchObject({ status: 'succeeded', final: true });
  });

  it('refuses an unknown run 404, a bad Last-Event-ID or after 400 naming it, no token 401', async () => {
    const unknown = await server.api('GET', `/api/runs/${randomUUID()}/events`);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: 'run_not_found' } });
    const { lease } = await heldRun();
    const header = await server.api('GET', `/api/runs/${lease.runId}/events`, undefined, {
      headers: { 'last-event-id': 'x1' },
    });
    expect(header.status).toBe(400);
    expect(header.json).toMatchObject({ error: { field: 'header.last-event-id' } });
    const query = await server.api('GET', `/api/runs/${lease.runId}/events?after=-1`);
    expect(query.json).toMatchObject({ error: { code: 'invalid_query', field: 'query.after' } });
    const anonymous = await server.api('GET', `/api/runs/${lease.runId}/events`, undefined, {
      token: null,
    });
    expect(anonymous.status).toBe(401);
    await server.mesh.ledger.finish(lease, 'failed', 'test over');
  });

  it('holds a bounded number of streams: 429 past it, the slot back when a client leaves', async () => {
    const app = meshApp(server.mesh, { log: () => undefined, version: 'test', maxStreams: 1 });
    const { lease } = await heldRun();
    const request = () =>
      app.request(`http://mesh.test/api/runs/${lease.runId}/events`, {
        headers: { authorization: `Bearer ${server.token}` },
      });
    const held = await request();
    expect(held.status).toBe(200);
    const refused = await request();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ error: { code: 'too_many_streams' } });
    await held.body?.cancel();
    const again = await request();
    expect(again.status).toBe(200);
    await again.body?.cancel();
    await server.mesh.ledger.finish(lease, 'succeeded', null);
  });

  it('holds a bounded number of streams per operator token, so one client cannot take them all', async () => {
    const app = meshApp(server.mesh, {
      log: () => undefined,
      version: 'test',
      maxStreams: 4,
      maxStreamsPerToken: 2,
    });
    const otherToken = (await createOperatorToken(server.mesh.db, 'second client')).token;
    const { lease } = await heldRun();
    const request = (token: string) =>
      app.request(`http://mesh.test/api/runs/${lease.runId}/events`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const mine = [await request(server.token), await request(server.token)];
    expect(mine.map((r) => r.status)).toEqual([200, 200]);
    const refused = await request(server.token);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: {
        code: 'too_many_streams',
        message: expect.stringContaining('this operator token') as string,
      },
    });
    // The server has room left, and another token takes it.
    const theirs = await request(otherToken);
    expect(theirs.status).toBe(200);
    await mine[0]?.body?.cancel();
    const again = await request(server.token);
    expect(again.status).toBe(200);
    for (const r of [mine[1], theirs, again]) await r?.body?.cancel();
    await server.mesh.ledger.finish(lease, 'succeeded', null);
  });

  it("sends the reply's text as it is written (delta events), never a draft whose round has its response", async () => {
    const { lease, conversationId } = await heldRun();
    const { ledger } = server.mesh;
    const res = await open(lease.runId);
    const events = sseEvents(res.body as ReadableStream<Uint8Array>);
    expect((await next(events)).event).toBe('state');
    const delta = async () => {
      const e = await next(events);
      expect(e.event).toBe('delta');
      return JSON.parse(e.data) as Record<string, unknown>;
    };

    // The first the stream sends replaces (reset); later text is appended.
    await ledger.draft(lease, { round: 1, attempt: 1, body: 'Looking' });
    expect(await delta()).toEqual({
      run_id: lease.runId,
      round: 1,
      attempt: 1,
      text: 'Looking',
      reset: true,
    });
    await ledger.draft(lease, { round: 1, attempt: 1, body: 'Looking it up' });
    expect(await delta()).toMatchObject({ text: ' it up', reset: false });
    // A retried call starts its text again.
    await ledger.draft(lease, { round: 1, attempt: 2, body: 'Let me' });
    expect(await delta()).toMatchObject({ attempt: 2, text: 'Let me', reset: true });

    // The round's response is the record: its draft is not sent again.
    await ledger.appendStep(
      lease,
      { kind: 'model_response', data: { round: 1, content: 'Let me see.', toolCalls: [] } },
      { rounds: 1 },
    );
    const response = await next(events);
    const responseStep = JSON.parse(response.data) as { kind: string };
    expect([response.event, responseStep.kind]).toEqual(['step', 'model_response']);
    const progress = await next(events);
    expect(progress.event).toBe('progress');
    // The next round asks the model again; its text streams as a new draft.
    await ledger.appendStep(lease, { kind: 'model_request', data: { round: 2 } });
    expect((await next(events)).event).toBe('step');
    await ledger.draft(lease, { round: 2, attempt: 1, body: 'Here it is' });
    expect(await delta()).toMatchObject({ round: 2, text: 'Here it is', reset: true });

    await ledger.recordReply(lease, { conversationId, actor: 'agent:ada', body: 'Here it is.' });
    await ledger.finish(lease, 'succeeded', null);
    const rest: string[] = [];
    for await (const e of events) rest.push(e.event);
    expect(rest).toEqual(['step', 'reply', 'effect', 'state']);
    // The run's end took its draft with it.
    const { rows } = await server.mesh.db.query('select 1 from run_drafts where run_id = $1', [
      lease.runId,
    ]);
    expect(rows).toHaveLength(0);
    // A draft from a worker that no longer holds the run is not written.
    expect(await ledger.draft(lease, { round: 3, attempt: 1, body: 'late' })).toBe(false);
  });

  it("follows the run's outbound events: each when first seen, again when its delivery changes", async () => {
    const { lease } = await heldRun();
    const { ledger } = server.mesh;
    const outbox = outboundStore(server.mesh.db);
    const call = await ledger.appendStep(lease, { kind: 'note', data: { n: 1 } });
    const { row: event } = await outbox.record({
      id: randomUUID(),
      idempotencyKey: `key-${randomUUID()}`,
      runId: lease.runId,
      stepSeq: call.seq,
      callId: 'c1',
      toolName: 'slack_post_message',
      kind: 'message',
      target: '#deploys',
      payload: { text: 'hi' },
      reconciles: false,
    });
    const res = await open(lease.runId);
    const events = sseEvents(res.body as ReadableStream<Uint8Array>);
    const effect = async () => {
      for (;;) {
        const e = await next(events);
        if (e.event === 'effect') return JSON.parse(e.data) as Record<string, unknown>;
      }
    };
    expect(await effect()).toMatchObject({
      run_id: lease.runId,
      id: event.id,
      state: 'delivering',
      attempts: 1,
      target: '#deploys',
    });
    await outbox.retryLater(event.id, 'rate limited');
    // A delivery is not a write to the run: the next read finds it.
    expect(await effect()).toMatchObject({ id: event.id, state: 'pending', attempts: 1 });
    await outbox.beginAttempt(event.id, 1);
    expect(await effect()).toMatchObject({ id: event.id, state: 'delivering', attempts: 2 });
    await outbox.delivered(event.id, { externalId: 'ts-1', link: null, result: null });
    expect(await effect()).toMatchObject({ state: 'delivered', externalId: 'ts-1' });
    await ledger.finish(lease, 'succeeded', null);
    const rest: string[] = [];
    for await (const e of events) rest.push(e.event);
    expect(rest).toEqual(['state']);
  });

  it("streams a conversation's runs in order, state and replies with <run>:<seq> ids, resumable", async () => {
    const { ledger } = server.mesh;
    const a = await heldRun();
    const conversationId = a.conversationId;
    await ledger.recordReply(a.lease, { conversationId, actor: 'agent:ada', body: 'One.' });
    await ledger.finish(a.lease, 'succeeded', null);

    const path = `api/conversations/${conversationId}/events`;
    const auth = { authorization: `Bearer ${server.token}` };
    const res = await fetch(`${server.url}${path}`, { headers: auth });
    expect(res.status).toBe(200);
    const events = sseEvents(res.body as ReadableStream<Uint8Array>);
    const label = (e: SseEvent) => {
      const data = JSON.parse(e.data) as { run_id: string; status?: string; final?: boolean };
      const run = data.run_id === a.lease.runId ? 'a' : 'b';
      return `${e.event} ${run} ${e.id ?? ''} ${data.status ?? ''}`.trim();
    };
    expect(label(await next(events))).toBe(`reply a ${a.lease.runId}:1`);
    expect(label(await next(events))).toBe('state a  succeeded');

    // The next message's run joins the open stream.
    const b = await heldRun(conversationId);
    expect(label(await next(events))).toBe('state b  running');
    await ledger.recordReply(b.lease, { conversationId, actor: 'agent:ada', body: 'Two.' });
    expect(label(await next(events))).toBe(`reply b ${b.lease.runId}:1`);
    await ledger.finish(b.lease, 'succeeded', null);
    expect(label(await next(events))).toBe('state b  succeeded');
    await events.return(undefined);

    // After a's reply: a's end again (states carry no id), then b's reply and end; nothing of a's reply.
    const resumed = await fetch(`${server.url}${path}`, {
      headers: { ...auth, 'last-event-id': `${a.lease.runId}:1` },
    });
    const again = sseEvents(resumed.body as ReadableStream<Uint8Array>);
    const replayed = [await next(again), await next(again), await next(again)].map(label);
    expect(replayed).toEqual([
      'state a  succeeded',
      `reply b ${b.lease.runId}:1`,
      'state b  succeeded',
    ]);
    await again.return(undefined);

    const bad = await server.api('GET', `/${path}`, undefined, {
      headers: { 'last-event-id': '7' },
    });
    expect(bad.json).toMatchObject({
      error: { code: 'invalid_header', field: 'header.last-event-id' },
    });
    const query = await server.api('GET', `/${path}?after=x`);
    expect(query.json).toMatchObject({ error: { code: 'invalid_query', field: 'query.after' } });
    const unknown = await server.api('GET', `/api/conversations/${randomUUID()}/events`);
    expect(unknown.json).toMatchObject({ error: { code: 'conversation_not_found' } });
  });
});
