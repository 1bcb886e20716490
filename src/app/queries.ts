import type { Mesh } from './mesh.ts';
import { progressMessageIds, runProgressNotes, type RunNoteRow } from '../store/progress-notes.ts';
import {
  findAgent as findAgentRow,
  getAgent as getAgentRow,
  listAgents as listAgentRows,
} from '../store/agents.ts';
import {
  getConversation as getConversationRow,
  listConversations as listConversationRows,
  listMessages as listMessageRows,
} from '../store/conversations.ts';
import { listToolProviders as listToolProviderRows } from '../store/mcp.ts';
import { questionsOfConversation, questionsOfRun } from '../store/questions.ts';
import * as usage from '../store/usage.ts';
import { readDraft } from '../store/run-drafts.ts';
import type { RunDraft } from '../run/records.ts';
import type { BrowserSessionRecord } from '../store/browsers.ts';
import { listOutboundEvents, type AgentOutboundEvent } from '../store/outbound-events.ts';
import { listMemories, type MemoryRow, type MemoryStatus } from '../store/memories.ts';
import type { QuestionRecord } from '../run/questions.ts';
import {
  findModelProvider as findModelProviderRow,
  listModelProviders as listModelProviderRows,
} from '../store/model-providers.ts';
import { getArtifact as getArtifactRow } from '../store/artifacts.ts';
import {
  listConversationRuns as listConversationRunRows,
  listRuns as listRunRows,
  listStepsAfter as listStepRowsAfter,
} from '../store/run-reads.ts';
import type {
  AgentRecord,
  ArtifactRecord,
  ConversationRecord,
  ConversationSummary,
  MessageRecord,
  ModelProviderRecord,
  RunRecord,
  StepRecord,
  ToolProviderRecord,
} from './records.ts';

/*
 * The reads the faces (CLI, API, UI) make. They go through the use-case layer like every write,
 * so a face never holds a database handle and the CLI can run them against a server's Mesh.
 */

export function listAgents(mesh: Mesh): Promise<AgentRecord[]> {
  return listAgentRows(mesh.db);
}

/** An agent by id (the faces' routes carry ids). */
export function getAgent(mesh: Mesh, id: string): Promise<AgentRecord | undefined> {
  return getAgentRow(mesh.db, id);
}

/** An agent by name or id (what an operator types). */
export function findAgent(mesh: Mesh, nameOrId: string): Promise<AgentRecord | undefined> {
  return findAgentRow(mesh.db, nameOrId);
}

export function getConversation(mesh: Mesh, id: string): Promise<ConversationRecord | undefined> {
  return getConversationRow(mesh.db, id);
}

export function listConversations(
  mesh: Mesh,
  agentId: string,
  limit?: number,
): Promise<ConversationSummary[]> {
  return listConversationRows(mesh.db, agentId, limit);
}

export type { RunNoteRow };

/** The progress notes a run posted to its conversation, oldest first. */
export function runNotes(mesh: Mesh, runId: string): Promise<RunNoteRow[]> {
  return runProgressNotes(mesh.db, runId);
}

/** Which of a conversation's messages are the agent's progress notes. */
export function progressNotesIn(mesh: Mesh, conversationId: string): Promise<Set<string>> {
  return progressMessageIds(mesh.db, conversationId);
}

export function listMessages(mesh: Mesh, conversationId: string): Promise<MessageRecord[]> {
  return listMessageRows(mesh.db, conversationId);
}

export function listModelProviders(mesh: Mesh): Promise<ModelProviderRecord[]> {
  return listModelProviderRows(mesh.db);
}

export function findModelProvider(
  mesh: Mesh,
  nameOrId: string,
): Promise<ModelProviderRecord | undefined> {
  return findModelProviderRow(mesh.db, nameOrId);
}

export function listToolProviders(mesh: Mesh): Promise<ToolProviderRecord[]> {
  return listToolProviderRows(mesh.db);
}

export function listRuns(
  mesh: Mesh,
  filter: { agentId?: string; limit?: number } = {},
): Promise<RunRecord[]> {
  return listRunRows(mesh.db, filter);
}

export function listConversationRuns(mesh: Mesh, conversationId: string): Promise<RunRecord[]> {
  return listConversationRunRows(mesh.db, conversationId);
}

export function getArtifact(mesh: Mesh, id: string): Promise<ArtifactRecord | undefined> {
  return getArtifactRow(mesh.db, id);
}

/** A run's steps numbered after `afterSeq`, oldest first (what a live stream has not sent). */
export function listStepsAfter(mesh: Mesh, runId: string, afterSeq: number): Promise<StepRecord[]> {
  return listStepRowsAfter(mesh.db, runId, afterSeq);
}

/** The run's browser sessions, oldest first (live view links, recordings). */
export async function runBrowserSessions(
  mesh: Mesh,
  runId: string,
): Promise<BrowserSessionRecord[]> {
  const { browserSessionsOfRun } = await import('../store/browsers.ts');
  return browserSessionsOfRun(mesh.db, runId);
}

/** The text the model is writing for the run's current round, while its call streams. */
export function runDraft(mesh: Mesh, runId: string): Promise<RunDraft | undefined> {
  return readDraft(mesh.db, runId);
}

/** The questions runs asked in a conversation (request_input), oldest first. */
export function conversationQuestions(
  mesh: Mesh,
  conversationId: string,
): Promise<QuestionRecord[]> {
  return questionsOfConversation(mesh.db, conversationId);
}

/** The questions a run asked, oldest first. */
export function runQuestions(mesh: Mesh, runId: string): Promise<QuestionRecord[]> {
  return questionsOfRun(mesh.db, runId);
}

/** Runs, tokens and tool calls per day per agent over the last `days` days. */
export function usageByDay(mesh: Mesh, days: number): Promise<usage.UsageDay[]> {
  return usage.usageByDay(mesh.db, days);
}

/** The commonest ways runs failed over the last `days` days. */
export function failuresByReason(
  mesh: Mesh,
  days: number,
  limit: number,
): Promise<usage.FailureCount[]> {
  return usage.failuresByReason(mesh.db, days, limit);
}

/** The slowest tools over the last `days` days, by their 95th percentile. */
export function slowestTools(
  mesh: Mesh,
  days: number,
  limit: number,
): Promise<usage.ToolLatency[]> {
  return usage.slowestTools(mesh.db, days, limit);
}

/** An agent's memories in every state (or in `status`), newest first. */
export function agentMemories(
  mesh: Mesh,
  agentId: string,
  limit: number,
  status?: MemoryStatus,
): Promise<MemoryRow[]> {
  return listMemories(mesh.db, agentId, limit, status);
}

/** Outbound events across agents (or one), newest first. */
export function outboundEvents(
  mesh: Mesh,
  filter: { readonly agentId?: string; readonly state?: string; readonly limit: number },
): Promise<AgentOutboundEvent[]> {
  return listOutboundEvents(mesh.db, filter);
}
