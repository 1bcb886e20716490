import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { memoryStore } from '../../src/app/agents/memory-service.ts';
import { listMemories } from '../../src/store/memories.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';
import { makeAgent } from '../support/run.ts';

describe.each(testDatabases())('the memory package on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let agent: string;
  let other: string;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
    const agentId = await makeAgent(opened.db, 'mem');
    agent = agentId;
    other = await makeAgent(opened.db, 'other');
  });
  afterAll(() => dispose());

  const call = (tool: string, args: unknown, who = agent) =>
    callToolAsOperator(mesh, {
      agent: who,
      tool,
      arguments: JSON.stringify(args),
      operator: 'ops@test',
    });

  it('remember persists a memory whose provenance is the operator’s invocation', async () => {
    const result = await call('remember', { content: 'The deploy window is Friday afternoon.' });
    expect(result.status).toBe('succeeded');
    expect(result.observation?.kind).toBe('result');
    const id = (result.observation?.data as { remembered: { id: string } }).remembered.id;
    const [row] = (await listMemories(mesh.db, agent)).filter((m) => m.id === id);
    expect(row?.provenance).toEqual({ kind: 'operator', operator: 'ops@test' });
    expect(row?.runId).toBe(result.runId);
    expect(row?.status).toBe('active');
  });

  it('refuses a parameter naming a source, naming it and the accepted fields, without echoing its value', async () => {
    const before = (await listMemories(mesh.db, agent)).length;
    const result = await call('remember', { content: 'x', source: 'ceo-said-so-canary' });
    expect(result.observation?.kind).toBe('invalid_input');
    expect(result.observation?.text).toContain(
      'unknown field `source`; the accepted fields are: content',
    );
    expect(result.observation?.text).not.toContain('ceo-said-so-canary');
    expect((await listMemories(mesh.db, agent)).length).toBe(before);
  });

  it('recall finds the agent’s own active memories by full-text search, and only its own', async () => {
    await call('remember', { content: 'Postgres backups run nightly at 02:00.' });
    await call('remember', { content: 'Secret plans of another agent about backups.' }, other);
    const found = await call('recall', { query: 'backups' });
    const memories = (found.observation?.data as { memories: { content: string }[] }).memories;
    expect(memories.map((m) => m.content)).toEqual(['Postgres backups run nightly at 02:00.']);
  });

  it('amend supersedes one memory with new content and reports both ids', async () => {
    const first = await call('remember', { content: 'The on-call rotation changes on Monday.' });
    const oldId = (first.observation?.data as { remembered: { id: string } }).remembered.id;
    const amended = await call('amend', {
      memory_id: oldId,
      content: 'The on-call rotation changes on Tuesday.',
    });
    const data = amended.observation?.data as {
      amended: { id: string };
      superseded: { id: string; status: string };
    };
    expect(data.superseded.id).toBe(oldId);
    expect(data.superseded.status).toBe('superseded');
    const rows = await listMemories(mesh.db, agent);
    const newer = rows.find((m) => m.id === data.amended.id);
    expect(newer?.supersedes).toBe(oldId);
    expect(rows.find((m) => m.id === oldId)?.supersededBy).toBe(data.amended.id);
    const recalled = await call('recall', { query: 'rotation' });
    expect(recalled.observation?.text).toContain('Tuesday');
    expect(recalled.observation?.text).not.toContain('Monday');
  });

  it('amend and forget refuse a memory that is not an active memory of this agent', async () => {
    const superseded = await call('remember', { content: 'temporary' });
    const id = (superseded.observation?.data as { remembered: { id: string } }).remembered.id;
    await call('forget', { memory_id: id, reason: 'no longer true' });
    const again = await call('amend', { memory_id: id, content: 'y' });
    expect(again.observation?.kind).toBe('invalid_input');
    expect(again.observation?.text).toContain(
      'field `memory_id` does not name an active memory of yours',
    );
    expect(again.observation?.text).not.toContain(id);
    const theirs = await call('remember', { content: 'not yours' }, other);
    const theirId = (theirs.observation?.data as { remembered: { id: string } }).remembered.id;
    expect((await call('forget', { memory_id: theirId, reason: 'x' })).observation?.kind).toBe(
      'invalid_input',
    );
    expect((await call('forget', { memory_id: 'not-a-uuid', reason: 'x' })).observation?.kind).toBe(
      'invalid_input',
    );
  });

  it('forget retires a memory with its reason', async () => {
    const r = await call('remember', { content: 'The office wifi password rotates monthly.' });
    const id = (r.observation?.data as { remembered: { id: string } }).remembered.id;
    const f = await call('forget', { memory_id: id, reason: 'moved to the vault' });
    expect(f.observation?.kind).toBe('result');
    const row = (await listMemories(mesh.db, agent)).find((m) => m.id === id);
    expect(row?.status).toBe('forgotten');
    expect(row?.forgottenReason).toBe('moved to the vault');
  });

  it('a resumed run re-running remember through the same call gets its first write back', async () => {
    const first = await call('remember', { content: 'idempotent per call' });
    const row = (await listMemories(mesh.db, agent)).find((m) => m.runId === first.runId);
    const through = { agentId: agent, runId: row?.runId ?? '', callId: row?.callId ?? '' };
    const again = await memoryStore(mesh.db).remember(through, 'idempotent per call, again');
    expect(again.id).toBe(row?.id);
    expect(again.content).toBe('idempotent per call');
    expect(
      (await listMemories(mesh.db, agent)).filter((m) => m.runId === first.runId),
    ).toHaveLength(1);
  });

  it('writes nothing through a run that is not the agent’s, naming the run', async () => {
    const theirs = await call('remember', { content: 'the other agent’s' }, other);
    const before = (await listMemories(mesh.db, agent)).length;
    const stolen = { agentId: agent, runId: theirs.runId ?? '', callId: 'call-x' };
    await expect(memoryStore(mesh.db).remember(stolen, 'planted')).rejects.toThrow(
      `run ${theirs.runId ?? ''} does not belong to this agent`,
    );
    expect((await listMemories(mesh.db, agent)).length).toBe(before);
  });

  it('an unknown tool name is an observation naming the tools, not an error', async () => {
    const result = await call('delete_all_memories', {});
    expect(result.observation?.kind).toBe('unknown_tool');
    expect(result.observation?.text).toContain('remember, recall, amend, forget');
  });
});
