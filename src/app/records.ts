/*
 * The record types the faces render. Faces import them from here, never from src/store, so the
 * store stays an implementation detail behind the use-case layer.
 */
export type { AgentRecord } from '../store/agents.ts';
export type { Audience, ConversationRecord, MessageRecord } from '../store/conversations.ts';
export type { ModelProviderRecord } from '../store/model-providers.ts';
export type { ArtifactRecord, RunRecord, StepRecord } from '../store/runs.ts';
export type { BindingRecord, ToolProviderRecord } from '../store/mcp.ts';
export type { OperatorTokenRecord } from '../store/operator-auth.ts';

import type { ConversationRecord } from '../store/conversations.ts';

/** A conversation as listed: with its message count and the time of its last message. */
export type ConversationSummary = ConversationRecord & {
  messages: number;
  lastMessageAt: Date | null;
};
