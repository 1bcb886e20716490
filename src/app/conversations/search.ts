import {
  CONVERSATION_SEARCH,
  type ConversationSearch,
} from '../../../tools/conversations/conversation-store.ts';
import { searchAgentMessages } from '../../store/conversations.ts';
import type { Db } from '../../store/db.ts';
import { getRun } from '../../store/runs.ts';
import type { MeshServiceFactory } from '../service-host.ts';

/**
 * conversation_search over the database. The scope comes from the run the call belongs to (its
 * agent and its conversation), never from anything the model sent.
 */
export function conversationSearch(db: Db): ConversationSearch {
  return {
    async search(ctx, query, limit) {
      const run = await getRun(db, ctx.runId);
      if (!run || run.agentId !== ctx.agentId)
        throw new Error(`run ${ctx.runId} does not belong to this agent`);
      const hits = await searchAgentMessages(db, {
        agentId: run.agentId,
        from: run.conversationId ?? null,
        query,
        limit,
        excludeMessageId: run.inboundMessageId ?? null,
      });
      return hits.map((h) => ({
        messageId: h.messageId,
        conversationId: h.conversationId,
        conversationTitle: h.conversationTitle,
        audience: h.audience,
        direction: h.direction,
        actor: h.actor,
        createdAt: new Date(h.createdAt).toISOString(),
        excerpt: h.excerpt,
      }));
    },
  };
}

export const conversationSearchService: MeshServiceFactory<ConversationSearch> = {
  key: CONVERSATION_SEARCH,
  create: (host) => conversationSearch(host.db),
};
