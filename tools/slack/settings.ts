import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kind the package's tool needs: the agent's own Slack token. */
export const TOKEN_KIND = 'slack_token';

/** The agent's mesh.slack settings, checked. */
export interface SlackSettings {
  /** The Web API root, with the trailing slash the SDK joins method names to. */
  readonly apiUrl: string;
}

export type SettingsOutcome = Outcome<SlackSettings>;

/** Reads and checks the package's config values for one call; messages name settings, not values. */
export function slackSettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const api = checkBaseUrl(
    'api_url',
    config['api_url'] ?? 'https://slack.com/api',
    config['allow_loopback_http'] === true,
  );
  if (!api.ok) return api;
  return { ok: true, settings: { apiUrl: `${api.url}/` } };
}
