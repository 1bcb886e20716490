import { LogLevel, WebClient, type Logger } from '@slack/web-api';
import type { HttpFetch } from '../../src/tool/context.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { TOKEN_KIND, type SlackSettings } from './settings.ts';

/** The event type of the metadata each message carries: our key, for a person looking for it. */
export const METADATA_EVENT = 'mesh_outbound_effect';

/** The SDK logs failed calls itself; the handler turns each into an observation instead. */
const QUIET: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/**
 * A client for one call, sending through the control plane's guarded fetch (`ctx.fetch`, the
 * SDK's `fetch` option). The SDK's own retries are off: the outbound machinery decides what is
 * retried (a retry the SDK made of an answer that was lost would be a second message), and a rate
 * limit is handed back rather than waited out inside the call.
 */
export function slackClient(settings: SlackSettings, token: string, fetch: HttpFetch): WebClient {
  return new WebClient(token, {
    slackApiUrl: settings.apiUrl,
    fetch,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logger: QUIET,
    timeout: 30_000,
  });
}

/** The observation for a token Slack refuses: names the fix, never the token. */
export const BAD_TOKEN_TEXT =
  `Slack refused this agent's token (invalid_auth). The operator needs to capture a valid ` +
  `${TOKEN_KIND} for this agent in its mesh.slack settings (the bot token of the Slack app ` +
  `installed as this agent); until then no Slack call can succeed.`;

const CREDENTIAL_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
]);

/** What a Slack error code means for the model, with the fix where there is one. */
function platformText(error: string, channel: string): string {
  if (CREDENTIAL_ERRORS.has(error)) return BAD_TOKEN_TEXT;
  switch (error) {
    case 'channel_not_found':
      return `Slack has no channel ${channel} that the agent's Slack identity can see (channel_not_found). Check the name, or invite the agent to it.`;
    case 'not_in_channel':
      return `The agent's Slack identity is not a member of ${channel} (not_in_channel): someone in the channel needs to invite it.`;
    case 'missing_scope':
      return `The agent's Slack token lacks the chat:write scope (missing_scope): the operator adds it to the agent's Slack app and reinstalls it.`;
    case 'is_archived':
      return `${channel} is archived (is_archived); post somewhere else.`;
    default:
      return `Slack refused the message: ${error}.`;
  }
}

/** Errors with which Slack says it did not act, and may if asked again later. */
const RETRYABLE = new Set(['ratelimited', 'service_unavailable']);
/** Errors after which the message may or may not have been posted (Slack's own words). */
const AMBIGUOUS = new Set(['fatal_error', 'internal_error', 'request_timeout']);

/** What a failed chat.postMessage means for its effect, read by the SDK's error codes. */
export function deliveryError(error: unknown, channel: string): DeliveryError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    data?: { error?: unknown };
    retryAfter?: unknown;
    statusCode?: unknown;
    original?: unknown;
  };
  // The egress policy refused the address before anything was sent: not Slack's answer.
  if (e.code === 'slack_webapi_request_error' && hasCode(e.original, 'egress_refused'))
    return new DeliveryError(
      'terminal',
      `Slack at the configured api_url could not be reached: ${(e.original as Error).message}.`,
    );
  switch (e.code) {
    case 'slack_webapi_rate_limited_error':
      return new DeliveryError('retryable', 'Slack rate-limited the message', {
        ...(typeof e.retryAfter === 'number' ? { retryAfterMs: e.retryAfter * 1000 } : {}),
      });
    case 'slack_webapi_platform_error': {
      const code = typeof e.data?.error === 'string' ? e.data.error : 'unknown_error';
      if (RETRYABLE.has(code)) return new DeliveryError('retryable', `Slack answered ${code}`);
      if (AMBIGUOUS.has(code)) return new DeliveryError('ambiguous', `Slack answered ${code}`);
      return new DeliveryError('terminal', platformText(code, channel));
    }
    case 'slack_webapi_http_error':
      return e.statusCode === 503
        ? new DeliveryError('retryable', 'Slack answered 503')
        : new DeliveryError('ambiguous', `Slack answered HTTP ${String(e.statusCode)}`);
    default:
      return new DeliveryError('ambiguous', 'Slack could not be reached, or the answer was lost');
  }
}
