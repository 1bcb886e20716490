import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kind the package's tools need: the agent's token, or its app's private key. */
export const CREDENTIAL_KIND = 'github_credential';

/** How the package authenticates to GitHub for this agent. */
export type GitHubAuth =
  | { readonly mode: 'token' }
  | { readonly mode: 'app'; readonly appId: string; readonly installationId: number };

/** The agent's mesh.github settings, checked. */
export interface GitHubSettings {
  /** The REST API root, without a trailing slash. */
  readonly apiBaseUrl: string;
  /** Where repositories are cloned from (`<git_base_url>/<owner>/<name>.git`), no trailing slash. */
  readonly gitBaseUrl: string;
  readonly auth: GitHubAuth;
}

export type SettingsOutcome = Outcome<GitHubSettings>;

/** Reads and checks the package's config values for one call. */
export function githubSettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const allow = config['allow_loopback_http'] === true;
  const api = checkBaseUrl(
    'api_base_url',
    config['api_base_url'] ?? 'https://api.github.com',
    allow,
  );
  if (!api.ok) return api;
  const git = checkBaseUrl('git_base_url', config['git_base_url'] ?? 'https://github.com', allow);
  if (!git.ok) return git;
  const mode = config['auth_mode'] ?? 'token';
  if (mode === 'token')
    return { ok: true, settings: { apiBaseUrl: api.url, gitBaseUrl: git.url, auth: { mode } } };
  if (mode !== 'app')
    return { ok: false, problem: 'the setting `auth_mode` must be `token` or `app`' };
  const appId = config['app_id'];
  const installationId = config['installation_id'];
  if (typeof appId !== 'string' || !/^[A-Za-z0-9.]{1,64}$/.test(appId))
    return {
      ok: false,
      problem: 'auth_mode is `app` but the setting `app_id` (the GitHub App id) is not set',
    };
  if (
    typeof installationId !== 'number' ||
    !Number.isSafeInteger(installationId) ||
    installationId < 1
  )
    return {
      ok: false,
      problem:
        'auth_mode is `app` but the setting `installation_id` (the installation for this agent) is not set',
    };
  return {
    ok: true,
    settings: {
      apiBaseUrl: api.url,
      gitBaseUrl: git.url,
      auth: { mode: 'app', appId, installationId },
    },
  };
}
