import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kind every tool of the package needs: the agent's own DeepSource access token. */
export const TOKEN_KIND = 'deepsource_api_token';

/** DeepSource's `VCSProvider` enum: where the repositories the agent names are hosted. */
export const VCS_PROVIDERS = [
  'GITHUB',
  'GITHUB_ENTERPRISE',
  'GITLAB',
  'BITBUCKET',
  'BITBUCKET_DATACENTER',
  'GSR',
  'ADS',
] as const;
export type VcsProvider = (typeof VCS_PROVIDERS)[number];

/** The dashboard's path prefix per provider (app.deepsource.com/gh/<owner>/<repo>/…). */
const DASHBOARD_PREFIX: Partial<Record<VcsProvider, string>> = {
  GITHUB: 'gh',
  GITLAB: 'gl',
  BITBUCKET: 'bb',
  GSR: 'gsr',
  ADS: 'ads',
};

/** The agent's mesh.deepsource settings, checked. */
export interface DeepSourceSettings {
  /** The GraphQL endpoint, with the trailing slash DeepSource's own URL has when it was given one. */
  readonly apiUrl: string;
  readonly vcsProvider: VcsProvider;
  /** The dashboard's origin (DeepSource Cloud's app, or an on-premise host's own origin). */
  readonly dashboardUrl: string;
}

export type SettingsOutcome = Outcome<DeepSourceSettings>;

const DEFAULT_API_URL = 'https://api.deepsource.io/graphql/';

/** Reads and checks the package's config values for one call; messages name settings, not values. */
export function deepsourceSettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const raw = config['api_url'] ?? DEFAULT_API_URL;
  const api = checkBaseUrl('api_url', raw, config['allow_loopback_http'] === true);
  if (!api.ok) return api;
  const provider = config['vcs_provider'] ?? 'GITHUB';
  const vcsProvider =
    typeof provider === 'string'
      ? VCS_PROVIDERS.find((p) => p === provider.trim().toUpperCase())
      : undefined;
  if (vcsProvider === undefined)
    return {
      ok: false,
      problem: `the setting \`vcs_provider\` must be one of ${VCS_PROVIDERS.join(', ')}`,
    };
  // checkBaseUrl drops trailing slashes; DeepSource's endpoint is /graphql/ and keeps its own.
  const apiUrl = typeof raw === 'string' && raw.trim().endsWith('/') ? `${api.url}/` : api.url;
  const url = new URL(apiUrl);
  const dashboardUrl =
    url.hostname === 'api.deepsource.io' ? 'https://app.deepsource.com' : url.origin;
  return { ok: true, settings: { apiUrl, vcsProvider, dashboardUrl } };
}

/** The dashboard link of an analysis run, or undefined for a provider without a known prefix. */
export function runLink(
  settings: DeepSourceSettings,
  owner: string,
  repo: string,
  runUid: string,
): string | undefined {
  const prefix = DASHBOARD_PREFIX[settings.vcsProvider];
  if (prefix === undefined) return undefined;
  const path = [prefix, owner, repo, 'run', runUid].map(encodeURIComponent).join('/');
  return `${settings.dashboardUrl}/${path}/`;
}
