import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import {
  WORKSPACES,
  WorkspaceUnavailableError,
  type ExecResult,
  type WorkspaceSession,
} from '../../src/tool/workspace.ts';
import {
  cloneUrl,
  gitCloneCommand,
  gitSetupCommand,
  noreplyEmail,
  workspaceGrant,
} from './checkout-commands.ts';
import { GH_PIN, ghProbeCommand, ghVerdict } from './gh-pin.ts';
import { connect, failureText, httpFailure } from './github-client.ts';
import { splitRepo } from './github-call.ts';
import { githubSettings } from './settings.ts';

export {
  getGithubIssue,
  getGithubPullRequest,
  listGithubPullRequestChecks,
  listGithubPullRequestFiles,
} from './reads.ts';
export {
  commentOnGithubIssue,
  createGithubIssue,
  createGithubPullRequest,
  createGithubPullRequestReview,
} from './writes.ts';
import { refused } from '../../src/tool/package-support.ts';

// The arguments were decoded against the manifest's schema before a handler runs: `repo` matches
// `owner/name`, branches match the ref pattern, and lengths are bounded.

const SETUP_TIMEOUT_MS = 60_000;
const CLONE_TIMEOUT_MS = 10 * 60_000;
/** How much of a failing command's output the observation keeps (its tail: where git says why). */
const OUTPUT_TAIL = 4000;

function tail(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes).trimEnd();
  return text.length > OUTPUT_TAIL ? `…${text.slice(-OUTPUT_TAIL)}` : text;
}

function commandFailure(what: string, result: ExecResult, redact: (s: string) => string): string {
  const how = result.timedOut
    ? 'ran past its deadline and was killed'
    : `exited with code ${result.exitCode ?? 'none (killed)'}`;
  const stderr = redact(tail(result.stderr));
  const stdout = redact(tail(result.stdout));
  const refusedHosts = [...new Set(result.egressRefused)];
  return [
    `${what} ${how}.`,
    refusedHosts.length > 0
      ? `Egress refused: ${refusedHosts.join(', ')} (not on this agent's allowlist; an operator allows the git host with \`mesh workspaces grant --allow-host <host>\`).`
      : '',
    stderr !== '' ? `stderr:\n${stderr}` : '',
    stdout !== '' ? `stdout:\n${stdout}` : '',
  ]
    .filter((s) => s !== '')
    .join('\n');
}

/**
 * Proves the credential and reads the repository from the control plane, then clones it into the
 * run's workspace with git set up to authenticate from the granted GH_TOKEN and to commit as the
 * agent's GitHub account.
 */
export async function checkoutGithubRepo(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const repo = args['repo'] as string;
  const { owner, name } = splitRepo(repo);
  const outcome = githubSettings(ctx.config);
  if (!outcome.ok) return refused(`checkout_github_repo cannot run: ${outcome.problem}.`);
  const settings = outcome.settings;

  const connected = await connect(ctx, settings, { identity: true });
  if (!connected.ok) return refused(connected.text);
  const { octokit, token, identity } = connected.connection;
  const redactor = createRedactor([token]);
  const redact = (s: string) => redactor.text(s);
  if (!identity) throw new Error('connect returned no identity');

  let defaultBranch: string;
  try {
    const { data } = await octokit.rest.repos.get({ owner, repo: name });
    defaultBranch = data.default_branch;
  } catch (error) {
    if (httpFailure(error)?.status === 404)
      return refused(
        `Repository ${repo} was not found on GitHub, or ${identity.login} cannot see it. Check the owner/name spelling, and that the account has access.`,
      );
    return refused(redact(failureText(`reading repository ${repo}`, settings, error)));
  }
  const branch = typeof args['branch'] === 'string' ? args['branch'] : defaultBranch;

  try {
    const workspace = await ctx.services.get(WORKSPACES).forCall(ctx);
    return await cloneInto(
      workspace,
      ctx.signal,
      {
        repo,
        name,
        branch,
        defaultBranch,
        token,
        redact,
        login: identity.login,
        id: identity.id,
        displayName: identity.name,
      },
      settings.gitBaseUrl,
    );
  } catch (error) {
    // The execution layer's degraded states (no backend, backend down, budget spent) are
    // observations the model can report, as workspace_exec's are.
    if (
      hasCode(error, WorkspaceUnavailableError.code) ||
      hasCode(error, 'workspace_backend_unavailable')
    )
      return refused(`There is no workspace to clone ${repo} into: ${(error as Error).message}`);
    throw error;
  }
}

interface Clone {
  readonly repo: string;
  readonly name: string;
  readonly branch: string;
  readonly defaultBranch: string;
  readonly token: string;
  readonly redact: (s: string) => string;
  readonly login: string;
  readonly id: number;
  readonly displayName: string | null;
}

/** Grants the token, configures git and clones: the workspace half of checkout_github_repo. */
async function cloneInto(
  workspace: WorkspaceSession,
  signal: AbortSignal,
  c: Clone,
  gitBaseUrl: string,
): Promise<ToolOutput> {
  const { repo, name, branch, defaultBranch, redact } = c;
  await workspace.grant(workspaceGrant(gitBaseUrl, c.token));
  const commitAs = { name: c.displayName ?? c.login, email: noreplyEmail(c.id, c.login) };
  const setup = await workspace.exec({
    command: gitSetupCommand(gitBaseUrl, commitAs),
    timeoutMs: SETUP_TIMEOUT_MS,
    signal,
  });
  if (setup.exitCode !== 0)
    return refused(
      commandFailure('Configuring git in the workspace (is git installed?)', setup, redact),
    );

  const clone = await workspace.exec({
    command: gitCloneCommand(cloneUrl(gitBaseUrl, repo), branch, name),
    timeoutMs: CLONE_TIMEOUT_MS,
    env: { GIT_TERMINAL_PROMPT: '0' },
    signal,
  });
  if (clone.exitCode !== 0)
    return refused(commandFailure(`git clone of ${repo} (branch ${branch})`, clone, redact));

  const probe = await workspace.exec({
    command: ghProbeCommand(GH_PIN),
    timeoutMs: SETUP_TIMEOUT_MS,
    signal,
  });
  const gh = ghVerdict(GH_PIN, {
    exitCode: probe.exitCode,
    stdout: Buffer.from(probe.stdout).toString('utf8'),
  });
  const path = `${workspace.root.replace(/\/+$/, '')}/${name}`;
  const onDefault = branch === defaultBranch;
  return {
    text: [
      `Cloned ${repo} into ${path}, on branch ${branch}${onDefault ? ' (the default branch)' : `; the default branch is ${defaultBranch}`}.`,
      `Git there fetches and pushes as the GitHub account ${c.login} (the token is in GH_TOKEN, read by a credential helper) and commits as ${commitAs.name} <${commitAs.email}>.`,
      gh.ok
        ? `GitHub CLI: gh ${gh.version} at ${gh.path}, checked against its pinned checksum; it uses the same credential. Open the pull request with \`${gh.path} pr create --base ${defaultBranch} --title "<title>" --body "<what, why, how tested>"\` (cwd ${name}).`
        : `GitHub CLI: not offered (${gh.why}); open the pull request with create_github_pull_request.`,
      `Next: edit files, run the tests with cwd ${name}, commit on a new branch (never on ${defaultBranch} directly) and push it with \`git push -u origin <branch>\`; then open a pull request against ${defaultBranch}.`,
    ].join('\n'),
    data: {
      repo,
      path,
      branch,
      default_branch: defaultBranch,
      login: c.login,
      gh: gh.ok ? { path: gh.path, version: gh.version } : null,
    },
  };
}
