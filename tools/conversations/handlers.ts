import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { CONVERSATION_SEARCH } from './conversation-store.ts';

const DEFAULT_LIMIT = 8;

/** Finds messages of the agent's own conversations by full-text search, best first. */
export async function conversationSearch(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_LIMIT;
  const hits = await ctx.services
    .get(CONVERSATION_SEARCH)
    .search(ctx, args['query'] as string, limit);
  const text =
    hits.length === 0
      ? 'No messages matched.'
      : hits
          .map((h) => {
            const who = h.direction === 'outbound' ? `you (to ${h.audience})` : h.actor;
            const where = h.conversationTitle ?? `conversation ${h.conversationId}`;
            return `- ${h.createdAt.slice(0, 16).replace('T', ' ')} UTC, ${who}, in ${where} (${h.audience}):\n  ${h.excerpt.replace(/\s+/g, ' ')}`;
          })
          .join('\n');
  return {
    text,
    data: {
      matches: hits.map((h) => ({
        message_id: h.messageId,
        conversation_id: h.conversationId,
        conversation_title: h.conversationTitle,
        audience: h.audience,
        direction: h.direction,
        actor: h.actor,
        created_at: h.createdAt,
        excerpt: h.excerpt,
      })),
    },
  };
}
