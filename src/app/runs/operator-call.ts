import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type { JsonObject } from '../../model/json.ts';
import { driveHeldRun } from '../../run/held-run.ts';
import { RUN_LEASE_MS } from '../../run/lease-heartbeat.ts';
import { observationFrom } from '../../run/observation-json.ts';
import type { RunDriver } from '../../run/driver.ts';
import { scriptCheckpoint, scriptDriver } from '../../run/script-driver.ts';
import { findAgent } from '../../store/agents.ts';
import type { RunRecord, StepRecord } from '../../run/records.ts';
import type { ToolRuntime } from '../../tool/context.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import type { Observation } from '../../tool/observation.ts';
import type { Registry } from '../../tool/registry.ts';
import { createGuardedFetch } from '../../egress/guarded-fetch.ts';
import type { Mesh } from '../mesh.ts';
import { agentConfig, agentRegistry } from '../packages/policy.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';

/** The operator on whose behalf a CLI invocation acts. */
export function currentOperator(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `uid:${process.getuid?.() ?? 'unknown'}@${hostname()}`;
  }
}

/** The runtime a run's calls get: the run's identity and provenance, and the wired services. */
export function runtimeFor(
  mesh: Mesh,
  run: RunRecord,
  signal: AbortSignal,
  configFor: ToolRuntime['configFor'] = () => ({}),
): ToolRuntime {
  return {
    agentId: run.agentId,
    runId: run.id,
    provenance: run.provenance as unknown as ToolRuntime['provenance'],
    signal,
    services: mesh.services,
    configFor,
    secretFor: (packageId, kind) =>
      mesh.secrets.reveal({
        ownerType: 'agent_tool',
        ownerId: agentToolOwnerId(run.agentId, packageId),
        kind,
      }),
    fetchFor: ({ allowLoopbackHttp }) =>
      createGuardedFetch({ allowLoopbackHttp, pools: mesh.egress }),
  };
}

/**
 * Drives operator calls (script runs), here and in a worker resuming one after a crash. The
 * operator's explicit call reaches any built-in tool; the agent's config still applies.
 */
export function operatorCallDriver(mesh: Mesh, offered?: Registry): RunDriver {
  return scriptDriver({
    // An explicit call reaches any built-in tool and the agent's own remote tools.
    registryFor: async (run) =>
      offered ?? (await agentRegistry(mesh, run.agentId, { onCheckFailure: 'last_seen' })).registry,
    runtimeFor: async (run, signal) =>
      runtimeFor(mesh, run, signal, await agentConfig(mesh, run.agentId)),
  });
}

/** What an operator's call came to. */
export interface OperatorCallResult {
  readonly runId: string;
  readonly status: string;
  readonly reason: string | null;
  readonly observation: Observation | undefined;
  readonly steps: readonly StepRecord[];
}

/**
 * Runs one tool call for an operator as a run with one tool step, through the same executor,
 * commit boundary and ledger as an agent's calls. Provenance is the operator's invocation.
 */
export async function callToolAsOperator(
  mesh: Mesh,
  input: { agent: string; tool: string; arguments: string; operator: string },
): Promise<OperatorCallResult> {
  const agent = await findAgent(mesh.db, input.agent);
  if (!agent) throw new MeshError('agent_not_found', `no agent named ${quoteName(input.agent)}`);
  // A tool that exists but is not offered is refused with why, before a run is made for it.
  const offered = await agentRegistry(mesh, agent.id, { onCheckFailure: 'last_seen' });
  if (!offered.registry.get(input.tool)) {
    const withheld = offered.withheld.find((w) => w.name === input.tool);
    if (withheld)
      throw new MeshError('tool_withheld', `${withheld.name} is not offered: ${withheld.reason}`);
  }
  const owner = `operator:${process.pid}:${randomUUID().slice(0, 8)}`;
  const run = await mesh.ledger.createRun({
    agentId: agent.id,
    kind: 'script',
    provenance: { kind: 'operator', operator: input.operator } satisfies JsonObject,
    budget: { maxToolCalls: 1, maxRounds: 1 },
    checkpoint: scriptCheckpoint([
      { id: `op_${randomUUID()}`, name: input.tool, arguments: input.arguments },
    ]),
    lease: { owner, leaseMs: RUN_LEASE_MS },
  });
  const lease = { runId: run.id, owner, epoch: run.leaseEpoch };
  const driver = operatorCallDriver(mesh, offered.registry);
  let end;
  try {
    end = await driveHeldRun(mesh.ledger, driver, run, lease);
  } catch (error) {
    // The call has a run with every step recorded: its id goes with the failure.
    if (error instanceof Error && !error.message.includes(run.id))
      error.message = `${error.message} (run ${run.id})`;
    throw error;
  }
  const steps = await mesh.ledger.steps(run.id);
  const last = steps.findLast((s) => s.kind === 'observation');
  return {
    runId: run.id,
    status: end.status,
    reason: end.reason,
    observation: last?.observation ? observationFrom(last.observation) : undefined,
    steps,
  };
}
