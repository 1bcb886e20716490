import { budgetFrom } from '../run/budget.ts';
import { budgetJson } from './agents/budget-meters.ts';
import type { BrowserSessionRecord } from './records.ts';
import type {
  AgentRecord,
  ConversationRecord,
  MessageRecord,
  RunRecord,
  StepRecord,
} from '../run/records.ts';
import type { OutboundEventRecord } from '../outbound/records.ts';
import type { QuestionRecord } from '../run/questions.ts';
import type { ModelProviderRecord } from '../store/model-providers.ts';
import type { AgentPackageView } from './packages/packages.ts';
import type { SecretSlotView } from './packages/secret-slot.ts';

/**
 * The JSON shapes operators read (API responses and `--json` output), built field by field so
 * no column rides along unannounced. Secrets appear only as presence.
 */

export function agentJson(a: AgentRecord): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    persona: a.persona,
    model_provider_id: a.modelProviderId,
    model: a.model,
    image_input: a.modelImageInput,
    // The budget each new run copies: the profile, defaults where it sets nothing.
    budget: budgetJson(budgetFrom(a.budget)),
    created_at: a.createdAt,
  };
}

export function secretSlotJson(s: SecretSlotView): Record<string, unknown> {
  return s.present
    ? { present: true, version: s.version, created_at: s.createdAt }
    : { present: false };
}

export function providerJson(
  p: ModelProviderRecord & { apiKey: SecretSlotView | null },
): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    kind: p.kind,
    base_url: p.baseUrl,
    context_tokens: p.contextTokens,
    max_output_tokens: p.maxOutputTokens,
    api_key: p.apiKey ? secretSlotJson(p.apiKey) : null,
    created_at: p.createdAt,
  };
}

export function agentPackageJson(p: AgentPackageView): Record<string, unknown> {
  return {
    id: p.id,
    version: p.version,
    description: p.description,
    config: p.config,
    values: p.values,
    set_keys: p.setKeys,
    secrets: Object.fromEntries(
      Object.entries(p.secrets).map(([key, slot]) => [key, secretSlotJson(slot)]),
    ),
    audiences: p.audiences ?? null,
    install: p.install,
    tools: p.tools,
  };
}

export function conversationJson(
  c: ConversationRecord & { messages?: number; lastMessageAt?: Date | null },
): Record<string, unknown> {
  return {
    id: c.id,
    agent_id: c.agentId,
    audience: c.audience,
    title: c.title,
    created_at: c.createdAt,
    ...(c.messages === undefined ? {} : { messages: c.messages }),
    ...(c.lastMessageAt === undefined ? {} : { last_message_at: c.lastMessageAt }),
  };
}

export function messageJson(m: MessageRecord): Record<string, unknown> {
  return {
    id: m.id,
    conversation_id: m.conversationId,
    direction: m.direction,
    actor: m.actor,
    // Who posted it for `actor`: a relay token's actor, or null when the actor posted it.
    relayed_by: m.relayedBy,
    body: m.body,
    created_at: m.createdAt,
  };
}

export function runSummaryJson(run: RunRecord): Record<string, unknown> {
  return {
    run_id: run.id,
    agent_id: run.agentId,
    conversation_id: run.conversationId,
    inbound_message_id: run.inboundMessageId,
    kind: run.kind,
    status: run.status,
    reason: run.reason,
    usage: run.usage,
    budget: run.budget,
    committed_at: run.committedAt,
    created_at: run.createdAt,
    finished_at: run.finishedAt,
  };
}

/**
 * A step as JSON: every column, null where the kind has none, so scripts reading the API see
 * one shape for every step.
 */
export function stepJson(step: StepRecord): Record<string, unknown> {
  const call = step.kind === 'tool_call' ? step : undefined;
  const about = step.kind === 'tool_call' || step.kind === 'observation' ? step : undefined;
  return {
    runId: step.runId,
    seq: step.seq,
    kind: step.kind,
    toolName: about?.toolName ?? null,
    callId: about?.callId ?? null,
    class: call?.effect?.class ?? null,
    replay: call?.effect?.replay ?? null,
    package: call?.package ?? null,
    arguments: call?.arguments ?? null,
    observation: step.kind === 'observation' ? step.observation : null,
    data: 'data' in step ? step.data : null,
    status: step.status,
    committedAt: call?.committedAt ?? null,
    startedAt: step.startedAt,
    finishedAt: step.finishedAt,
  };
}

/** One effect of a run: where it went, its delivery state and what the provider made of it. */
export function effectJson(e: OutboundEventRecord): Record<string, unknown> {
  return {
    id: e.id,
    step: e.stepSeq,
    callId: e.callId,
    tool: e.toolName,
    kind: e.kind,
    target: e.target,
    state: e.state,
    attempts: e.attempts,
    lastError: e.lastError,
    externalId: e.externalId,
    link: e.link,
    reconciles: e.reconciles,
    idempotencyKey: e.idempotencyKey,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

/** A run, its steps and its effects as JSON for scripts and the API. */
export function runJson(
  run: RunRecord,
  steps: readonly StepRecord[],
  effects: readonly OutboundEventRecord[] = [],
  questions: readonly QuestionRecord[] = [],
  sessions: readonly BrowserSessionRecord[] = [],
): Record<string, unknown> {
  return {
    ...runSummaryJson(run),
    steps: steps.map(stepJson),
    effects: effects.map(effectJson),
    questions: questions.map(questionJson),
    browser_sessions: sessions.map(browserSessionJson),
  };
}

/** A browser session of a run, as the API answers it: where to watch it, its recording. */
export function browserSessionJson(s: BrowserSessionRecord): Record<string, unknown> {
  return {
    id: s.id,
    state: s.state,
    live_view_url: s.liveViewUrl,
    recording_artifact_id: s.recordingArtifactId,
    created_at: s.createdAt,
    ready_at: s.readyAt,
    released_at: s.releasedAt,
    release_reason: s.releaseReason,
    taken_over_by: s.takenOverBy,
    handed_back_at: s.handedBackAt,
  };
}

/**
 * What a run waited for from its conversation, as the API answers it: a question (request_input)
 * or its browser handed to a person (browser_handoff, with the Live View `link`).
 */
export function questionJson(q: QuestionRecord): Record<string, unknown> {
  return {
    kind: q.kind,
    link: q.link,
    call_id: q.callId,
    question: q.question,
    choices: [...q.choices],
    state: q.state,
    message_id: q.messageId,
    asked_at: q.askedAt,
    expires_at: q.expiresAt,
    answered_by: q.answeredBy,
    answer_message_id: q.answerMessageId,
    settled_at: q.settledAt,
  };
}

/**
 * A wire shape's time as text: a Date in this process, already text when it came over JSON. For
 * the lines a face prints from a wire shape.
 */
export function isoText(t: Date | string): string {
  return typeof t === 'string' ? t : t.toISOString();
}
