import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { deliveryOutput, OUTBOX } from '../../src/tool/outbound.ts';
import { TOKEN_KIND, slackSettings } from './settings.ts';
import { deliveryError, METADATA_EVENT, slackClient } from './slack-client.ts';

/**
 * Posts a message. chat.postMessage takes no idempotency key, so the effect has no lookup: an
 * attempt whose answer was lost is reported unknown and never posted again.
 */
export async function postSlackMessage(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const outcome = slackSettings(ctx.config);
  if (!outcome.ok)
    return { text: `post_slack_message cannot run: ${outcome.problem}.`, isError: true };
  const client = slackClient(outcome.settings, await ctx.secret(TOKEN_KIND), ctx.fetch);
  const channel = args['channel'] as string;
  const text = args['text'] as string;
  const threadTs = typeof args['thread_ts'] === 'string' ? args['thread_ts'] : undefined;
  const shown = /^[CGD][A-Z0-9]+$/.test(channel) ? channel : `#${channel.replace(/^#/, '')}`;
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'message',
    kind: 'slack.chat_post_message',
    target: `channel ${shown}`,
    payload: { channel, text, ...(threadTs === undefined ? {} : { thread_ts: threadTs }) },
    async send(key) {
      try {
        const answer = await client.chat.postMessage({
          channel: channel.replace(/^#/, ''),
          text,
          ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
          metadata: { event_type: METADATA_EVENT, event_payload: { key: key.key } },
        });
        const ts = answer.ts ?? '';
        const posted = answer.channel ?? channel;
        return { externalId: `${posted}/${ts}`, data: { channel: posted, ts } };
      } catch (error) {
        throw deliveryError(error, shown);
      }
    },
  });
  return deliveryOutput(`posting the message to ${shown}`, delivery, (receipt) => ({
    text: `Posted to ${shown} (message ts ${typeof receipt.data?.['ts'] === 'string' ? receipt.data['ts'] : 'unknown'}).`,
    data: { ...receipt.data },
  }));
}
