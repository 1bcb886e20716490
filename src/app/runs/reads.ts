import type { QuestionRecord } from '../../run/questions.ts';
import type { RunDraft } from '../../run/records.ts';
import { getArtifact as getArtifactRow } from '../../store/artifacts.ts';
import type { BrowserSessionRecord } from '../../store/browsers.ts';
import { listOutboundEvents, type AgentOutboundEvent } from '../../store/outbound-events.ts';
import { runProgressNotes, type RunNoteRow } from '../../store/progress-notes.ts';
import { questionsOfRun } from '../../store/questions.ts';
import { readDraft } from '../../store/run-drafts.ts';
import {
  listConversationRuns as listConversationRunRows,
  listRuns as listRunRows,
  listStepsAfter as listStepRowsAfter,
} from '../../store/run-reads.ts';
import type { Mesh } from '../mesh.ts';
import type { ArtifactRecord, RunRecord, StepRecord } from '../records.ts';

export type { RunNoteRow };

/* The reads of runs and what they made (steps, artifacts, drafts, questions, notes, outbound events) that the faces make. */

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

export function listStepsAfter(mesh: Mesh, runId: string, afterSeq: number): Promise<StepRecord[]> {
  return listStepRowsAfter(mesh.db, runId, afterSeq);
}

export async function runBrowserSessions(
  mesh: Mesh,
  runId: string,
): Promise<BrowserSessionRecord[]> {
  const { browserSessionsOfRun } = await import('../../store/browsers.ts');
  return browserSessionsOfRun(mesh.db, runId);
}

export function runDraft(mesh: Mesh, runId: string): Promise<RunDraft | undefined> {
  return readDraft(mesh.db, runId);
}

export function runQuestions(mesh: Mesh, runId: string): Promise<QuestionRecord[]> {
  return questionsOfRun(mesh.db, runId);
}

export function runNotes(mesh: Mesh, runId: string): Promise<RunNoteRow[]> {
  return runProgressNotes(mesh.db, runId);
}

export function outboundEvents(
  mesh: Mesh,
  filter: { readonly agentId?: string; readonly state?: string; readonly limit: number },
): Promise<AgentOutboundEvent[]> {
  return listOutboundEvents(mesh.db, filter);
}
