import { browserAdmin, grantBrowserBackend } from '../../src/app/backends/browser-admin.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { InstanceKey } from '../../src/secrets/instance-key.ts';
import { afterAll, beforeAll } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import type { TestDatabase } from './db.ts';
import type { ModelClient } from '../../src/model/client.ts';
import type { Script } from '../../src/providers/scripted.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { insertModelProvider } from '../../src/store/model-providers.ts';
import { rememberMemory } from '../../src/store/memories.ts';
import type { Db } from '../../src/store/db.ts';

/** Creates a scripted provider and an agent using it; returns the agent's id. */
export async function scriptedAgent(
  mesh: Mesh,
  script: Script,
  name = `agent-${randomUUID().slice(0, 8)}`,
): Promise<string> {
  const provider = await insertModelProvider(mesh.db, {
    id: randomUUID(),
    name: `scripted-${randomUUID().slice(0, 8)}`,
    kind: 'scripted',
    baseUrl: null,
    script: script as never,
  });
  const id = randomUUID();
  await insertAgent(mesh.db, { id, name, modelProviderId: provider.id, model: 'scripted-1' });
  return id;
}

/**
 * Creates an OpenAI-compatible provider at `baseUrl` (a loopback fake), captures its API key, and
 * an agent using it; returns the agent's id.
 */
export async function fakeModelAgent(
  mesh: Mesh,
  baseUrl: string,
  name: string,
  apiKey = `sk-${name}-0123456789`,
): Promise<string> {
  const provider = await insertModelProvider(mesh.db, {
    id: randomUUID(),
    name,
    kind: 'openai_compatible',
    baseUrl,
    script: null,
  });
  await mesh.secrets.capture({
    ownerType: 'model_provider',
    ownerId: provider.id,
    kind: 'api_key',
    value: apiKey,
  });
  const id = randomUUID();
  await insertAgent(mesh.db, { id, name, modelProviderId: provider.id, model: 'fake-model' });
  return id;
}

/**
 * `base` with every model call answered by `client` (the test's own, in process), and an agent
 * whose provider is an OpenAI-compatible one that is never reached, model `stub-model`; returns
 * the Mesh to drive turns through and the agent's id.
 */
export async function clientAgent(
  base: Mesh,
  client: ModelClient,
  name: string,
): Promise<{ mesh: Mesh; agentId: string }> {
  const provider = await insertModelProvider(base.db, {
    id: randomUUID(),
    name: `stub-${randomUUID().slice(0, 8)}`,
    kind: 'openai_compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    script: null,
  });
  const agentId = randomUUID();
  await insertAgent(base.db, {
    id: agentId,
    name,
    modelProviderId: provider.id,
    model: 'stub-model',
  });
  return { mesh: { ...base, modelClientFor: () => client }, agentId };
}

/** A fresh, random instance key for a test's Mesh. */
export function testInstanceKey(): InstanceKey {
  return new InstanceKey(randomBytes(32));
}

/**
 * Gives `agentId` a memory written by an operator, so that its turns are offered the verbs that
 * act on one (recall, amend, forget: withheld while it has none).
 */
export async function seedMemory(
  db: Db,
  agentId: string,
  content = 'a seeded fact',
): Promise<void> {
  const write = { agentId, provenance: { kind: 'operator', actor: 'test' }, sourceMessageId: null };
  await rememberMemory(db, randomUUID(), { ...write, runId: null, callId: null }, content);
}

/**
 * Registers this machine's Chromium as a development browser backend (`chromium`) and grants it
 * to `agent`, with loopback allowed (the test sites listen there).
 */
export async function grantLocalBrowser(mesh: Mesh, agent: string): Promise<void> {
  await browserAdmin.add(mesh, { name: 'chromium', kind: 'local', development: true });
  await grantBrowserBackend(mesh, {
    agent,
    backend: 'chromium',
    allowLoopback: true,
    operator: 'operator:test',
  });
}

/**
 * A Mesh over a fresh database of `database` for the tests of one describe block: opened before
 * them, its worker stopped and its database dropped after. Call the answer inside a test.
 */
export function suiteMesh(database: TestDatabase): () => Mesh {
  let mesh: Mesh | undefined;
  let dispose: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
  });
  afterAll(async () => {
    await mesh?.runs.close();
    await dispose?.();
  });
  return () => {
    if (!mesh) throw new Error('the suite’s Mesh is opened in beforeAll: use it inside a test');
    return mesh;
  };
}
