import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/run/records.ts';
import { DraftFollower } from '../../src/server/run-event-followers.ts';
import { testDatabases } from '../support/db.ts';
import { heldRun } from '../support/held-run.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { sseEvents, type SseEvent } from '../support/sse.ts';
import { scriptedAgent } from '../support/turn.ts';

/*
 * A model streamed a key's first 21 of 22 characters, paused, then sent the last one: a `delta`
 * event carried the 21 characters, and the saved draft held them. Redaction removes a secret once
 * it is whole; a draft now holds back the tail that could still grow into one.
 */
describe.each(testDatabases())(
  'a streamed reply and the secrets Mesh holds, on $name',
  (database) => {
    let server: TestServer;
    let dispose: () => Promise<void>;
    let agentId: string;

    beforeAll(async () => {
      const opened = await database.open();
      server = await startTestServer(opened.db);
      dispose = () => opened.dispose();
      agentId = await scriptedAgent(
        server.mesh,
        { rules: [], fallback: { content: 'Hi.' } },
        'ada',
      );
    }, 60_000);

    afterAll(async () => {
      await server?.close();
      await dispose?.();
    });

    const draftRow = async (runId: string) =>
      (
        await server.mesh.db.query<{ body: string }>(
          'select body from run_drafts where run_id = $1',
          [runId],
        )
      ).rows[0]?.body;

    it('sends no part of a key the model is halfway through, then the whole key redacted', async () => {
      const key = 'sk-live-4f9Qz7Lm2Xc8Vb';
      expect(key).toHaveLength(22);
      server.mesh.redactor.hold(key);
      const { lease } = await heldRun(server.mesh.ledger, agentId, { owner: 'test-worker' });
      const res = await fetch(`${server.url}api/runs/${lease.runId}/events`, {
        headers: { authorization: `Bearer ${server.token}` },
      });
      const events = sseEvents(res.body as ReadableStream<Uint8Array>);
      const next = async (): Promise<SseEvent> => {
        const read = await events.next();
        if (read.done) throw new Error('the stream ended');
        return read.value;
      };
      expect((await next()).event).toBe('state');

      await server.mesh.ledger.draft(lease, {
        round: 1,
        attempt: 1,
        body: `Your key is ${key.slice(0, 21)}`,
      });
      const first = await next();
      expect(first.event).toBe('delta');
      expect(JSON.parse(first.data)).toMatchObject({ text: 'Your key is ', reset: true });
      expect(await draftRow(lease.runId)).toBe('Your key is ');

      await server.mesh.ledger.draft(lease, { round: 1, attempt: 1, body: `Your key is ${key}.` });
      const second = await next();
      expect(JSON.parse(second.data)).toMatchObject({ text: '[redacted].', reset: false });
      expect(await draftRow(lease.runId)).toBe('Your key is [redacted].');
      await server.mesh.ledger.finish(lease, 'succeeded', null);
      const rest: string[] = [];
      for await (const e of events) rest.push(e.data);
      expect(rest.join('\n')).not.toContain(key.slice(0, 8));
    });

    it('never shows 8 or more characters of a held secret in any chunking (property)', async () => {
      const secretArb = fc
        .tuple(
          fc.constantFrom('sk-', 'ghp_', 'xoxb-', 'lin_api_', ''),
          fc.stringMatching(/^[A-Za-z0-9_+/=.~-]{10,36}$/),
        )
        .map(([prefix, body]) => `${prefix}${body}`);
      // Filler from another alphabet, so it cannot itself spell the start of a secret.
      const fillerArb = fc.stringMatching(/^[ !?,;:()]{0,12}$/);
      const caseArb = fc.record({
        parts: fc.array(fc.tuple(fillerArb, secretArb, fc.constantFrom('', '%', 'json')), {
          minLength: 1,
          maxLength: 3,
        }),
        cuts: fc.array(fc.nat(), { minLength: 1, maxLength: 24 }),
      });
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ parts, cuts }) => {
          const secrets = parts.map(([, s]) => s);
          for (const s of secrets) server.mesh.redactor.hold(s);
          // Each secret written as is, URL-encoded or JSON-escaped: forms the redactor knows.
          const text = parts
            .map(
              ([filler, s, form]) =>
                filler +
                (form === '%' ? encodeURIComponent(s) : form === 'json' ? JSON.stringify(s) : s),
            )
            .join('');
          const { lease } = await heldRun(server.mesh.ledger, agentId, { owner: 'prop-worker' });
          const follower = new DraftFollower(lease.runId);
          const shown: string[] = [];
          const run = (await server.mesh.ledger.run(lease.runId)) as RunRecord;
          const points = [...new Set(cuts.map((c) => 1 + (c % text.length)))].sort((a, b) => a - b);
          for (const at of [...points, text.length]) {
            await server.mesh.ledger.draft(lease, {
              round: 1,
              attempt: 1,
              body: text.slice(0, at),
            });
            shown.push(`row: ${(await draftRow(lease.runId)) ?? ''}`);
            const delta = await follower.next(server.mesh, run);
            if (delta) shown.push(`delta: ${String(delta['text'])}`);
          }
          await server.mesh.ledger.finish(lease, 'succeeded', null);
          // And every line the server logged meanwhile.
          shown.push(...server.logs.map((l) => `log: ${l}`));
          for (const s of secrets)
            for (const form of [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1)])
              for (const line of shown)
                expect(line, `${line} shows the start of a held secret`).not.toContain(
                  form.slice(0, 8),
                );
        }),
        { numRuns: 30 },
      );
    }, 120_000);
  },
);
