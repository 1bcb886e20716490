import type { ModelClient } from '../model/client.ts';
import type { ToolPackage } from '../manifest/package-manifest.ts';
import type { AgentRecord, ConversationRecord, MessageRecord, RunRecord } from '../run/records.ts';
import type { CallHooks } from '../run/tool-step.ts';
import type { Clock } from '../tool/clock.ts';
import type { ToolRuntime } from '../tool/context.ts';
import type { Registry } from '../tool/registry.ts';
import type { InputBudget } from './context-budget.ts';

/** The policy-scoped registry of a turn, with the reasons for every tool left out. */
export interface TurnOffer {
  readonly registry: Registry;
  readonly withheld: readonly { readonly name: string; readonly reason: string }[];
  configFor: ToolRuntime['configFor'];
  /** The agent's public tool settings, rendered into the system prompt. */
  readonly publicSettings: string;
}

/** The model a turn talks to, with its input budget. */
export interface TurnModel {
  readonly client: ModelClient;
  readonly model: string;
  readonly budget: InputBudget;
  /** The model accepts image input: images tools returned are added to its requests. */
  readonly imageInput?: boolean;
}

/** One of the agent's open commitments, as its instructions list it. */
export interface OpenCommitment {
  readonly id: string;
  readonly text: string;
  /** ISO 8601, or null when it has no due time. */
  readonly due: string | null;
}

/** Everything a turn reads, wired by the composition root. */
export interface TurnEnvironment {
  readonly packages: readonly ToolPackage[];
  loadTurn(run: RunRecord): Promise<{
    agent: AgentRecord;
    conversation: ConversationRecord;
    inbound: MessageRecord;
    history: readonly MessageRecord[];
    memories: readonly { id: string; content: string }[];
    /** The agent's open commitments, soonest due first (what `fulfil` closes). */
    commitments: readonly OpenCommitment[];
  }>;
  /** What this turn may offer and execute (already scoped by policy), and what it may not, why. */
  policyFor(
    run: RunRecord,
    agent: AgentRecord,
    conversation: ConversationRecord,
  ): Promise<TurnOffer>;
  runtimeFor(run: RunRecord, signal: AbortSignal, configFor: ToolRuntime['configFor']): ToolRuntime;
  modelFor(agent: AgentRecord, run: RunRecord): Promise<TurnModel>;
  readonly hooks?: CallHooks;
  /** Where budgets read the time; the system clock when omitted. */
  readonly clock?: Clock;
}

/** What a turn reads of its run's world at its start. */
export type LoadedTurn = Awaited<ReturnType<TurnEnvironment['loadTurn']>>;
