import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kind every tool of the package needs: the agent's own Linear API key. */
export const API_KEY_KIND = 'linear_api_key';

/** The agent's mesh.linear settings, checked. */
export interface LinearSettings {
  readonly apiUrl: string;
  /** The team key new issues go to when a call names none. */
  readonly defaultTeam: string | undefined;
  /** Where the install's webhook delivers Linear's events; none registered without it. */
  readonly webhookUrl: string | undefined;
}

export type SettingsOutcome = Outcome<LinearSettings>;

/** Reads and checks the package's config values for one call; messages name settings, not values. */
export function linearSettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const api = checkBaseUrl(
    'api_url',
    config['api_url'] ?? 'https://api.linear.app/graphql',
    config['allow_loopback_http'] === true,
  );
  if (!api.ok) return api;
  let webhookUrl: string | undefined;
  const hookUrl = config['webhook_url'];
  if (typeof hookUrl === 'string' && hookUrl.trim() !== '') {
    const hook = checkBaseUrl(
      'webhook_url',
      hookUrl.trim(),
      config['allow_loopback_http'] === true,
    );
    if (!hook.ok) return hook;
    webhookUrl = hook.url;
  }
  const team = config['default_team'];
  return {
    ok: true,
    settings: {
      apiUrl: api.url,
      defaultTeam: typeof team === 'string' && team.trim() !== '' ? team.trim() : undefined,
      webhookUrl,
    },
  };
}
