import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/store/db.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { services, type ToolRuntime } from '../../src/tool/context.ts';
import type { JsonObject } from '../../src/model/json.ts';
import type { RunRecord, StepRecord } from '../../src/run/records.ts';

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

/** The call id of a tool call or observation step; undefined for other kinds. */
export function callIdOf(step: StepRecord | undefined): string | undefined {
  return step?.kind === 'tool_call' || step?.kind === 'observation' ? step.callId : undefined;
}

/** The stored observation of an observation step; undefined for other kinds. */
export function observationOf(step: StepRecord | undefined): JsonObject | undefined {
  return step?.kind === 'observation' ? step.observation : undefined;
}

/** The data of a model request, model response, note or reply step; undefined for other kinds. */
export function dataOf(
  step: StepRecord | undefined,
): Readonly<Record<string, unknown>> | undefined {
  return step && 'data' in step ? step.data : undefined;
}
