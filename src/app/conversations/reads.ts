import type { QuestionRecord } from '../../run/questions.ts';
import {
  getConversation as getConversationRow,
  listConversations as listConversationRows,
  listMessages as listMessageRows,
} from '../../store/conversations.ts';
import { progressMessageIds } from '../../store/progress-notes.ts';
import { questionsOfConversation } from '../../store/questions.ts';
import type { Mesh } from '../mesh.ts';
import type { ConversationRecord, ConversationSummary, MessageRecord } from '../records.ts';

/* The reads of conversations, their messages and their questions that the faces make. */

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

export function listMessages(mesh: Mesh, conversationId: string): Promise<MessageRecord[]> {
  return listMessageRows(mesh.db, conversationId);
}

export function progressNotesIn(mesh: Mesh, conversationId: string): Promise<Set<string>> {
  return progressMessageIds(mesh.db, conversationId);
}

export function conversationQuestions(
  mesh: Mesh,
  conversationId: string,
): Promise<QuestionRecord[]> {
  return questionsOfConversation(mesh.db, conversationId);
}
