import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kind every tool of the package needs: the agent's own Sentry auth token. */
export const TOKEN_KIND = 'sentry_auth_token';

/** Sentry organization slugs: lowercase letters, digits, hyphens and underscores. */
const ORGANIZATION_SLUG = /^[a-z0-9][a-z0-9_-]{0,49}$/;

/** The agent's mesh.sentry settings, checked. */
export interface SentrySettings {
  /** The REST API root, without a trailing slash (`https://sentry.io/api/0`). */
  readonly apiUrl: string;
  /** The organization's slug, as it appears in every path. */
  readonly organization: string;
}

export type SettingsOutcome = Outcome<SentrySettings>;

/** Reads and checks the package's config values for one call; messages name settings, not values. */
export function sentrySettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const api = checkBaseUrl(
    'api_url',
    config['api_url'] ?? 'https://sentry.io/api/0',
    config['allow_loopback_http'] === true,
  );
  if (!api.ok) return api;
  const organization = config['organization'];
  if (typeof organization !== 'string' || organization.trim() === '')
    return {
      ok: false,
      problem:
        'the setting `organization` is not set (the slug of the Sentry organization, as in its URLs)',
    };
  const slug = organization.trim().toLowerCase();
  if (!ORGANIZATION_SLUG.test(slug))
    return {
      ok: false,
      problem:
        'the setting `organization` is not an organization slug (lowercase letters, digits, hyphens, underscores)',
    };
  return { ok: true, settings: { apiUrl: api.url, organization: slug } };
}
