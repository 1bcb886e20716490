/**
 * The shell commands checkout_github_repo runs in the workspace, built here as plain strings so
 * they can be read, and run by real git in tests, apart from any workspace.
 */

/** `value` quoted for `/bin/sh`: single quotes, each inner one closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A git credential helper that answers `get` with the token in `$GH_TOKEN` (granted to the
 * workspace, so it is never on a command line or in a file) and ignores `store` and `erase`.
 * `x-access-token` is the user name GitHub takes for personal and installation tokens alike.
 */
export const CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$GH_TOKEN"; }; f';

/** How the agent commits: its GitHub login (or name) and the account's noreply address. */
export interface CommitAs {
  readonly name: string;
  readonly email: string;
}

/** GitHub's noreply address for an account, which attributes commits to it without exposing mail. */
export function noreplyEmail(id: number, login: string): string {
  return `${id}+${login}@users.noreply.github.com`;
}

/**
 * Configures git (globally, for the workspace's user): the credential helper for `gitBaseUrl`
 * only, so the token is offered to no other host, and the commit identity.
 */
export function gitSetupCommand(gitBaseUrl: string, as: CommitAs): string {
  return [
    `git config --global --replace-all ${shellQuote(`credential.${gitBaseUrl}.helper`)} ${shellQuote(CREDENTIAL_HELPER)}`,
    `git config --global user.name ${shellQuote(as.name)}`,
    `git config --global user.email ${shellQuote(as.email)}`,
  ].join(' && ');
}

/** The clone URL of `owner/name` on `gitBaseUrl` (never the API's `clone_url`). */
export function cloneUrl(gitBaseUrl: string, fullName: string): string {
  return `${gitBaseUrl}/${fullName}.git`;
}

/** Clones one branch of the repository into `directory`. */
export function gitCloneCommand(url: string, branch: string, directory: string): string {
  return `git clone --branch ${shellQuote(branch)} -- ${shellQuote(url)} ${shellQuote(directory)}`;
}

/**
 * The environment the workspace is granted: GH_TOKEN for git's credential helper and for `gh` on
 * github.com. `gh` reads a different variable for any other host (GitHub Enterprise Server), and
 * needs to be told which host, so those two are granted too when the git host is not github.com.
 */
export function workspaceGrant(gitBaseUrl: string, token: string): Record<string, string> {
  const host = new URL(gitBaseUrl).host;
  return host === 'github.com'
    ? { GH_TOKEN: token }
    : { GH_TOKEN: token, GH_ENTERPRISE_TOKEN: token, GH_HOST: host };
}
