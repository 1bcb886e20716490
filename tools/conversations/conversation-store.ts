import { serviceKey, type ToolContext } from '../../src/tool/context.ts';

/** One message that matched, as the model reads it. */
export interface ConversationHit {
  readonly messageId: string;
  readonly conversationId: string;
  readonly conversationTitle: string | null;
  readonly audience: 'direct' | 'shared';
  /** `inbound` (someone wrote to the agent) or `outbound` (the agent's reply). */
  readonly direction: 'inbound' | 'outbound';
  readonly actor: string;
  readonly createdAt: string;
  readonly excerpt: string;
}

/** Searches the calling agent's conversations, scoped by the call's own conversation. */
export interface ConversationSearch {
  search(ctx: ToolContext, query: string, limit: number): Promise<readonly ConversationHit[]>;
}

export const CONVERSATION_SEARCH = serviceKey<ConversationSearch>('mesh.conversations.search');
