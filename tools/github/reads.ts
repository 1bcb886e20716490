import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { refused } from '../../src/tool/package-support.ts';
import { linkedPage, open, type Opened } from './github-call.ts';
import { failureText, httpFailure, readRetrying } from './github-client.ts';

// Reading issues, pull requests, their files and checks, as the agent's own account.
// The arguments were decoded against the manifest's schema before a handler runs: `repo` matches
// `owner/name`, numbers are positive integers, lengths and enums are bounded.

/** How much of an issue's or pull request's body a read shows. */
const BODY_EXCERPT = 2000;
/** Files read per page, and at most in all (GitHub itself lists at most 3000). */
const FILES_PER_PAGE = 100;
const DEFAULT_FILES = 100;
/** Check runs read (one page: GitHub's maximum per page). */
const CHECKS_PER_PAGE = 100;

function excerpt(body: string | null | undefined): string {
  if (!body) return '';
  return body.length > BODY_EXCERPT
    ? `${body.slice(0, BODY_EXCERPT)}… (${body.length - BODY_EXCERPT} more characters)`
    : body;
}

/** The observation for a failed read: a 404 says what is missing, the rest as GitHub said. */
function readFailure(o: Opened, what: string, missing: string, error: unknown): ToolOutput {
  if (httpFailure(error)?.status === 404)
    return refused(
      `${missing} was not found on GitHub, or this agent's account cannot see it. Check the repository and the number.`,
    );
  return refused(o.redact(failureText(what, o.settings, error)));
}

function labelNames(labels: readonly (string | { name?: string | undefined })[]): string[] {
  return labels
    .map((l) => (typeof l === 'string' ? l : (l.name ?? '')))
    .filter((name) => name !== '');
}

/** Reads one issue (or a pull request, which GitHub's issues API also answers for). */
export async function getGithubIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await open(ctx, 'get_github_issue', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  try {
    const { data } = await readRetrying(ctx.signal, () =>
      o.octokit.rest.issues.get({ owner: o.owner, repo: o.name, issue_number: number }),
    );
    const labels = labelNames(data.labels);
    const isPull = data.pull_request !== undefined && data.pull_request !== null;
    return {
      text: [
        `${o.repo}#${data.number} [${data.state}] ${data.title}`,
        `${isPull ? 'A pull request (get_github_pull_request reads its branches and mergeability)' : 'An issue'} by ${data.user?.login ?? 'unknown'}; labels: ${labels.length > 0 ? labels.join(', ') : 'none'}; ${data.comments} comment(s). ${data.html_url}`,
        data.body ? `\n${excerpt(data.body)}` : '',
      ]
        .filter((line) => line !== '')
        .join('\n'),
      data: {
        number: data.number,
        title: data.title,
        state: data.state,
        labels,
        author: data.user?.login ?? null,
        comments: data.comments,
        is_pull_request: isPull,
        body_excerpt: excerpt(data.body),
        html_url: data.html_url,
      },
    };
  } catch (error) {
    return readFailure(o, `reading issue #${number}`, `Issue #${number} in ${o.repo}`, error);
  }
}

/** Reads one pull request: its state, branches, mergeability and size. */
export async function getGithubPullRequest(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await open(ctx, 'get_github_pull_request', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  try {
    const { data } = await readRetrying(ctx.signal, () =>
      o.octokit.rest.pulls.get({ owner: o.owner, repo: o.name, pull_number: number }),
    );
    const state = data.merged ? 'merged' : data.state;
    const mergeable =
      data.mergeable === null
        ? 'not computed yet (read it again shortly)'
        : data.mergeable
          ? 'yes'
          : 'no';
    const head = data.head.label ?? data.head.ref;
    return {
      text: [
        `${o.repo}#${data.number} [${state}${data.draft ? ', draft' : ''}] ${data.title}`,
        `${head} (${data.head.sha.slice(0, 7)}) into ${data.base.ref}; mergeable: ${mergeable}${data.mergeable_state ? ` (${data.mergeable_state})` : ''}.`,
        `+${data.additions} −${data.deletions} in ${data.changed_files} file(s), ${data.commits} commit(s), by ${data.user.login}. ${data.html_url}`,
        data.body ? `\n${excerpt(data.body)}` : '',
      ]
        .filter((line) => line !== '')
        .join('\n'),
      data: {
        number: data.number,
        title: data.title,
        state,
        draft: data.draft ?? false,
        merged: data.merged,
        mergeable: data.mergeable,
        mergeable_state: data.mergeable_state,
        head: { ref: data.head.ref, label: head, sha: data.head.sha },
        base: { ref: data.base.ref },
        additions: data.additions,
        deletions: data.deletions,
        changed_files: data.changed_files,
        author: data.user.login,
        html_url: data.html_url,
      },
    };
  } catch (error) {
    return readFailure(
      o,
      `reading pull request #${number}`,
      `Pull request #${number} in ${o.repo}`,
      error,
    );
  }
}

/** Lists a pull request's changed files, page by page up to `limit`. */
export async function listGithubPullRequestFiles(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await open(ctx, 'list_github_pull_request_files', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_FILES;
  const perPage = Math.min(FILES_PER_PAGE, limit);
  type File = {
    filename: string;
    status: string;
    additions: number;
    deletions: number;
    previous_filename?: string | undefined;
  };
  const files: File[] = [];
  let more = false;
  try {
    for (let page = 1; files.length < limit; page++) {
      const { data, headers } = await readRetrying(ctx.signal, () =>
        o.octokit.rest.pulls.listFiles({
          owner: o.owner,
          repo: o.name,
          pull_number: number,
          per_page: perPage,
          page,
        }),
      );
      files.push(...data.slice(0, limit - files.length));
      more = linkedPage(headers, 'next') !== undefined;
      if (!more || data.length < perPage) break;
    }
  } catch (error) {
    return readFailure(
      o,
      `listing the files of pull request #${number}`,
      `Pull request #${number} in ${o.repo}`,
      error,
    );
  }
  const lines = files.map(
    (f) =>
      `${f.status} ${f.previous_filename ? `${f.previous_filename} → ` : ''}${f.filename} +${f.additions} −${f.deletions}`,
  );
  const truncated = more && files.length >= limit;
  return {
    text:
      files.length === 0
        ? `Pull request #${number} in ${o.repo} changes no files.`
        : [
            `${files.length} file(s) changed in ${o.repo}#${number}${truncated ? ` (the first ${files.length}; there are more: raise limit, up to 300)` : ''}:`,
            ...lines,
          ].join('\n'),
    data: {
      files: files.map((f) => ({
        filename: f.filename,
        status: f.status,
        additions: f.additions,
        deletions: f.deletions,
        ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
      })),
      truncated,
    },
  };
}

/** Lists the check runs of a pull request's head commit. */
export async function listGithubPullRequestChecks(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await open(ctx, 'list_github_pull_request_checks', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  let sha: string;
  try {
    const { data } = await readRetrying(ctx.signal, () =>
      o.octokit.rest.pulls.get({ owner: o.owner, repo: o.name, pull_number: number }),
    );
    sha = data.head.sha;
  } catch (error) {
    return readFailure(
      o,
      `reading pull request #${number}`,
      `Pull request #${number} in ${o.repo}`,
      error,
    );
  }
  try {
    const { data } = await readRetrying(ctx.signal, () =>
      o.octokit.rest.checks.listForRef({
        owner: o.owner,
        repo: o.name,
        ref: sha,
        per_page: CHECKS_PER_PAGE,
      }),
    );
    const runs = data.check_runs.map((run) => ({
      name: run.name,
      status: run.status,
      conclusion: run.conclusion ?? null,
      html_url: run.html_url ?? run.details_url ?? null,
    }));
    const short = sha.slice(0, 7);
    const counts = new Map<string, number>();
    for (const run of runs) {
      const outcome = run.conclusion ?? run.status;
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    }
    return {
      text:
        runs.length === 0
          ? `No check runs on the head commit ${short} of ${o.repo}#${number} (no CI reports checks there, or they have not started).`
          : [
              `${data.total_count} check run(s) on the head commit ${short} of ${o.repo}#${number}: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}${data.total_count > runs.length ? ` (showing ${runs.length})` : ''}.`,
              ...runs.map((r) =>
                `${r.name}: ${r.status}${r.conclusion ? `, ${r.conclusion}` : ''} ${r.html_url ?? ''}`.trimEnd(),
              ),
            ].join('\n'),
      data: { head_sha: sha, total_count: data.total_count, check_runs: runs },
    };
  } catch (error) {
    return readFailure(
      o,
      `listing the checks of commit ${sha.slice(0, 7)}`,
      `Commit ${sha.slice(0, 7)} in ${o.repo}`,
      error,
    );
  }
}
