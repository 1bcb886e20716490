/*
 * The record types the faces render. Faces import them from here, never from src/store, so the
 * store stays an implementation detail behind the use-case layer.
 */
export type { Audience } from '../policy/audience.ts';
export type {
  AgentRecord,
  ArtifactRecord,
  ConversationRecord,
  MessageRecord,
  ModelRequestStep,
  ModelResponseStep,
  NoteStep,
  ObservationStep,
  ReplyStep,
  RunDraft,
  RunRecord,
  RunStatus,
  StepKind,
  StepRecord,
  StepStatus,
  ToolCallStep,
} from '../run/records.ts';
export type { DeliveryState, OutboundEventRecord } from '../outbound/records.ts';
export type { QuestionRecord } from '../run/questions.ts';
export type { ChangeWatch } from '../run/run-queue.ts';
export type { ModelProviderRecord } from '../store/model-providers.ts';
export type { BindingRecord, ToolProviderRecord } from '../store/mcp.ts';
export type { OperatorTokenRecord } from '../store/operator-auth.ts';
export type { BrowserSessionRecord } from '../store/browsers.ts';

import type { ConversationRecord } from '../run/records.ts';

/** A conversation as listed: with its message count and the time of its last message. */
export type ConversationSummary = ConversationRecord & {
  messages: number;
  lastMessageAt: Date | null;
};
