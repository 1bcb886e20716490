import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { insertModelProvider } from '../../src/store/model-providers.ts';
import { setPackageAudiences, setToolEnabled } from '../../src/store/tool-policy.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { seedMemory, testInstanceKey } from '../support/turn.ts';

const MEMORY_VERBS = ['remember', 'recall', 'amend', 'forget'];

describe.each(testDatabases())('offer-time gating on $name', (database) => {
  let mesh: Mesh;
  let fake: FakeChatCompletions;
  let dispose: () => Promise<void>;
  let providerId: string;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
    fake = await startFakeChatCompletions();
    providerId = randomUUID();
    await insertModelProvider(mesh.db, {
      id: providerId,
      name: `p-${providerId.slice(0, 6)}`,
      kind: 'openai_compatible',
      baseUrl: fake.baseUrl,
      script: null,
    });
    await mesh.secrets.capture({
      ownerType: 'model_provider',
      ownerId: providerId,
      kind: 'api_key',
      value: 'sk-test-key-123456',
    });
  });
  afterAll(async () => {
    await fake.close();
    await dispose();
  });

  async function agent(): Promise<string> {
    const id = randomUUID();
    await insertAgent(mesh.db, {
      id,
      name: `a-${id.slice(0, 8)}`,
      modelProviderId: providerId,
      model: 'fake-model',
    });
    return id;
  }

  const forget = { packageId: 'mesh.memory', toolName: 'forget' };

  it('a tool opted out for an agent is absent from the model request, and the step says why', async () => {
    const agentId = await agent();
    await seedMemory(mesh.db, agentId);
    // An opt-out of another package's tool of the same name withholds nothing here.
    await setToolEnabled(mesh.db, agentId, { packageId: 'acme.notes', toolName: 'forget' }, false);
    await setToolEnabled(mesh.db, agentId, forget, false);
    fake.enqueue({ kind: 'completion', content: 'ok' });
    const before = fake.requests.length;
    const result = await chat(mesh, { agentId, actor: 'ada', body: 'hello' });
    expect(result.status).toBe('succeeded');
    const body = fake.requests[before]?.body ?? '';
    expect(body).toContain('"remember"');
    expect(body).not.toContain('"forget"');
    const request = result.steps.find((s) => s.kind === 'model_request');
    expect(request?.data?.['offered']).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      'remember',
      'recall',
      'amend',
    ]);
    // Other packages' tools are withheld for their own reasons (no secret, no backend).
    const withheldMemory = (request?.data?.['withheld'] as { name: string }[]).filter((w) =>
      MEMORY_VERBS.includes(w.name),
    );
    expect(withheldMemory).toEqual([{ name: 'forget', reason: 'disabled for this agent' }]);

    await setToolEnabled(mesh.db, agentId, forget, true);
    fake.enqueue({ kind: 'completion', content: 'ok' });
    const again = await chat(mesh, { agentId, actor: 'ada', body: 'hello' });
    expect(again.steps.find((s) => s.kind === 'model_request')?.data?.['offered']).toContain(
      'forget',
    );
  });

  it('a package limited to direct conversations is not offered in a shared one', async () => {
    const agentId = await agent();
    await setPackageAudiences(mesh.db, agentId, 'mesh.memory', ['direct']);
    const { run } = await receiveMessage(mesh.ledger, {
      agentId,
      audience: 'shared',
      actor: 'bob',
      body: 'hi all',
    });
    // Drive it through the same path as chat: a worker-less claim under a lease.
    await mesh.db.query(`update runs set status = 'failed' where id = $1`, [run.id]);
    fake.enqueue({ kind: 'completion', content: 'hello everyone' });
    const before = fake.requests.length;
    const shared = await chat(mesh, {
      agentId,
      conversationId: run.conversationId ?? '',
      actor: 'bob',
      body: 'hi all',
    });
    expect(shared.status).toBe('succeeded');
    const body = fake.requests[before]?.body ?? '';
    for (const verb of MEMORY_VERBS) expect(body).not.toContain(`"${verb}"`);
    // What is not limited is still offered there: searching its own shared conversations.
    expect(shared.steps.find((s) => s.kind === 'model_request')?.data?.['offered']).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
    ]);
    const withheld = shared.steps.find((s) => s.kind === 'model_request')?.data?.['withheld'] as {
      name: string;
      reason: string;
    }[];
    expect(withheld.filter((w) => MEMORY_VERBS.includes(w.name)).map((w) => w.reason)).toEqual(
      Array(4).fill('not offered in shared conversations'),
    );
  });
});
