import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/store/db.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { services, type ToolRuntime } from '../../src/tool/context.ts';
import type { RunRecord } from '../../src/store/runs.ts';

/** Creates an agent with a unique name and returns its id. */
export async function makeAgent(db: Db, prefix = 'agent'): Promise<string> {
  const id = randomUUID();
  await insertAgent(db, { id, name: `${prefix}-${id.slice(0, 8)}` });
  return id;
}

/** The runtime a scripted run's calls get: the run's own identity, no services. */
export function runtimeFor(run: RunRecord, signal: AbortSignal): ToolRuntime {
  return {
    agentId: run.agentId,
    runId: run.id,
    provenance: { kind: 'operator', operator: 'test' },
    signal,
    services: services([]),
    configFor: () => ({}),
  };
}
