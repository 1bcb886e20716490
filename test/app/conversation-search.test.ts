import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { turnPolicy } from '../../src/app/packages/policy.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { insertConversation, insertMessage } from '../../src/store/conversations.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import { conversationSearch } from '../../tools/conversations/handlers.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * conversation_search over real full-text search: a decision from an earlier conversation of the
 * same agent is found (ranked, with date and actor); another agent's conversations never are;
 * and what a turn sees follows its conversation's audience — a shared space never shows a direct
 * conversation, a direct conversation never shows someone else's.
 */
describe.each(testDatabases())('conversation_search on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const ada = randomUUID();
  const bob = randomUUID();

  async function conversation(
    agentId: string,
    audience: 'direct' | 'shared',
    title: string,
    messages: readonly [direction: 'inbound' | 'outbound', actor: string, body: string][],
  ): Promise<{ id: string; last: string }> {
    const id = randomUUID();
    await insertConversation(mesh.db, { id, agentId, audience, title });
    let last = '';
    for (const [direction, actor, body] of messages) {
      last = randomUUID();
      await insertMessage(mesh.db, { id: last, conversationId: id, direction, actor, body });
    }
    return { id, last };
  }

  /** The tool's answer in a run of `agentId` answering `inbound` in `conversationId`. */
  async function search(
    agentId: string,
    conversationId: string | null,
    inbound: string | null,
    query: string,
  ) {
    const run = await mesh.ledger.createRun({
      agentId,
      kind: 'turn',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: {},
      ...(conversationId ? { conversationId } : {}),
      ...(inbound ? { inboundMessageId: inbound } : {}),
    });
    const ctx = {
      agentId,
      runId: run.id,
      callId: 'c1',
      signal: new AbortController().signal,
      services: mesh.services,
    } as unknown as ToolContext;
    const out = await conversationSearch(ctx, { query });
    return {
      text: out.text,
      matches: (out.data as { matches: { conversation_id: string; actor: string }[] }).matches,
    };
  }

  let adaDeploy: { id: string; last: string };
  let adaDirectWithCarol: { id: string; last: string };
  let adaShared: { id: string; last: string };
  let adaNow: { id: string; last: string };
  let bobDeploy: { id: string; last: string };

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
    await insertAgent(mesh.db, { id: ada, name: `ada-${ada.slice(0, 6)}` });
    await insertAgent(mesh.db, { id: bob, name: `bob-${bob.slice(0, 6)}` });
    adaDeploy = await conversation(ada, 'direct', 'release planning', [
      ['inbound', 'dana', 'When should we ship the billing change?'],
      ['outbound', 'ada', 'We decided the deploy window is Tuesday 14:00 UTC, after the freeze.'],
    ]);
    adaDirectWithCarol = await conversation(ada, 'direct', 'carol 1:1', [
      ['inbound', 'carol', 'Personal: I will move the deploy window for my team to Friday.'],
    ]);
    adaShared = await conversation(ada, 'shared', '#ops', [
      ['inbound', 'erin', 'Reminder: the staging database migrates on Thursday.'],
    ]);
    bobDeploy = await conversation(bob, 'shared', '#bob-ops', [
      ['outbound', 'bob', 'Bob decided the deploy window is Monday 09:00.'],
    ]);
    adaNow = await conversation(ada, 'direct', 'today', [
      ['inbound', 'dana', 'what did we decide about the deploy window last week?'],
    ]);
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  it('is offered to every agent: it needs no provider, only its own service', async () => {
    const policy = await turnPolicy(mesh, ada, 'direct');
    expect(policy.registry.get('conversation_search')).toBeDefined();
  });

  it('finds the decision from an earlier conversation, with date, actor and conversation', async () => {
    const found = await search(ada, adaNow.id, adaNow.last, 'deploy window');
    expect(found.matches[0]).toMatchObject({ conversation_id: adaDeploy.id, actor: 'ada' });
    expect(found.text).toContain('Tuesday');
    expect(found.text).toContain('release planning');
    expect(found.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    // The message being answered is not its own search result.
    expect(found.text).not.toContain('last week');
  });

  it("never finds another agent's conversations", async () => {
    const found = await search(ada, adaNow.id, adaNow.last, 'deploy window Monday');
    expect(found.matches.map((m) => m.conversation_id)).not.toContain(bobDeploy.id);
    expect(found.text).not.toContain('Bob');
    const bobs = await search(bob, bobDeploy.id, null, 'deploy window');
    expect(bobs.matches.map((m) => m.conversation_id)).toEqual([bobDeploy.id]);
  });

  it('never shows a direct conversation with someone else, nor any from a shared space', async () => {
    // From dana's direct conversation: dana's direct conversations and shared ones, not carol's.
    const fromDana = await search(ada, adaNow.id, adaNow.last, 'deploy window');
    expect(fromDana.matches.map((m) => m.conversation_id)).not.toContain(adaDirectWithCarol.id);
    const staging = await search(ada, adaNow.id, adaNow.last, 'staging');
    expect(staging.matches.map((m) => m.conversation_id)).toEqual([adaShared.id]);
    // From the shared space: only shared conversations.
    const fromShared = await search(ada, adaShared.id, adaShared.last, 'deploy window');
    expect(fromShared.matches).toEqual([]);
    expect(fromShared.text).toBe('No messages matched.');
    // With no conversation (an operator's call): shared conversations only.
    const operator = await search(ada, null, null, 'deploy window OR staging');
    expect(operator.matches.map((m) => m.conversation_id)).toEqual([adaShared.id]);
  });

  it('takes search syntax without failing on it, and quoting what it cannot parse', async () => {
    const odd = await search(ada, adaNow.id, adaNow.last, '"deploy window" -Friday & | ! ( :*');
    expect(odd.matches.map((m) => m.conversation_id)).toContain(adaDeploy.id);
  });
});
