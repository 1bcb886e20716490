import type { Octokit } from '@octokit/rest';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { InvalidToolInputError } from '../../src/tool/errors.ts';
import {
  deliveryOutput,
  OUTBOX,
  type EffectKey,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import { connect, deliveryError, failureText, httpFailure, readRetrying } from './github-client.ts';
import { githubSettings, type GitHubSettings } from './settings.ts';
import { refused } from '../../src/tool/package-support.ts';

// Issues, pull requests, their files, checks, comments and reviews, as the agent's own account.
// The arguments were decoded against the manifest's schema before a handler runs: `repo` matches
// `owner/name`, numbers are positive integers, lengths and enums are bounded.
//
// GitHub's write endpoints take no idempotency key. Each body we write ends with a hidden marker
// carrying our key (`<!-- mesh-outbound:KEY -->`, an HTML comment GitHub does not render), and
// each effect's lookup reads back what the account wrote recently, looking for that marker.

/** How much of an issue's or pull request's body a read shows. */
const BODY_EXCERPT = 2000;
/** Files read per page, and at most in all (GitHub itself lists at most 3000). */
const FILES_PER_PAGE = 100;
const DEFAULT_FILES = 100;
/** Check runs read (one page: GitHub's maximum per page). */
const CHECKS_PER_PAGE = 100;
/** How many of the newest issues the agent created a lookup reads. */
const LOOKUP_ISSUES = 100;
/** Comments and reviews are listed oldest first: a lookup reads the last two pages of this size. */
const LOOKUP_PAGE = 100;

/** The hidden marker that carries our key in a body GitHub stores. */
export function marker(key: EffectKey): string {
  return `<!-- mesh-outbound:${key.key} -->`;
}

export function withMarker(body: string | undefined, key: EffectKey): string {
  return body === undefined || body === '' ? marker(key) : `${body}\n\n${marker(key)}`;
}

export function hasMarker(body: string | null | undefined, key: EffectKey): boolean {
  return typeof body === 'string' && body.includes(marker(key));
}

function splitRepo(repo: string): { owner: string; name: string } {
  const [owner = '', name = ''] = repo.split('/');
  if (name === '.' || name === '..' || name.endsWith('.git'))
    throw new InvalidToolInputError(
      'field `repo` must be `owner/name`, the name without `.git` and not `.` or `..`',
    );
  return { owner, name };
}

function excerpt(body: string | null | undefined): string {
  if (!body) return '';
  return body.length > BODY_EXCERPT
    ? `${body.slice(0, BODY_EXCERPT)}… (${body.length - BODY_EXCERPT} more characters)`
    : body;
}

interface Opened {
  readonly settings: GitHubSettings;
  readonly octokit: Octokit;
  readonly repo: string;
  readonly owner: string;
  readonly name: string;
  readonly redact: (s: string) => string;
}

/** Settings, the repository and a connection for one call, or the observation that says why not. */
async function open(
  ctx: ToolContext,
  tool: string,
  args: JsonObject,
): Promise<{ ok: true; opened: Opened } | { ok: false; out: ToolOutput }> {
  const repo = args['repo'] as string;
  const { owner, name } = splitRepo(repo);
  const outcome = githubSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  const connected = await connect(ctx, outcome.settings, { identity: false });
  if (!connected.ok) return { ok: false, out: refused(connected.text) };
  const redactor = createRedactor([connected.connection.token]);
  return {
    ok: true,
    opened: {
      settings: outcome.settings,
      octokit: connected.connection.octokit,
      repo,
      owner,
      name,
      redact: (s) => redactor.text(s),
    },
  };
}

/** The observation for a failed read: a 404 says what is missing, the rest as GitHub said. */
function readFailure(o: Opened, what: string, missing: string, error: unknown): ToolOutput {
  if (httpFailure(error)?.status === 404)
    return refused(
      `${missing} was not found on GitHub, or this agent's account cannot see it. Check the repository and the number.`,
    );
  return refused(o.redact(failureText(what, o.settings, error)));
}

/** The page number a `Link` header names as `rel` (GitHub's pagination), if it names one. */
function linkedPage(headers: { link?: string | undefined }, rel: string): number | undefined {
  const link = headers.link ?? '';
  for (const part of link.split(',')) {
    if (!part.includes(`rel="${rel}"`)) continue;
    const page = /[?&]page=(\d+)/.exec(part)?.[1];
    if (page !== undefined) return Number(page);
  }
  return undefined;
}

/**
 * The newest entries of a list GitHub returns oldest first (an issue's comments, a pull request's
 * reviews): the last page and the one before it, found through the first page's `Link` header.
 */
async function newest<T>(
  list: (page: number) => Promise<{ data: T[]; headers: { link?: string | undefined } }>,
): Promise<T[]> {
  const first = await list(1);
  const last = linkedPage(first.headers, 'last');
  if (last === undefined || last <= 1) return first.data;
  const pages = last === 2 ? [first] : [await list(last - 1)];
  pages.push(await list(last));
  return pages.flatMap((p) => p.data);
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

/** A stored receipt field as text (receipts are JSON the package wrote itself). */
function numberOf(receipt: EffectReceipt): string {
  const n = receipt.data?.['number'];
  return typeof n === 'number' ? String(n) : 'unknown';
}

/**
 * Opens an issue. The body carries our marker; a lost answer is reconciled by listing the newest
 * issues the agent's account created in the repository and looking for it.
 */
export async function createGithubIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await open(ctx, 'create_github_issue', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const title = args['title'] as string;
  const body = typeof args['body'] === 'string' ? args['body'] : undefined;
  const labels = Array.isArray(args['labels']) ? (args['labels'] as string[]) : undefined;
  type Issue = { id: number; number: number; html_url: string; title: string };
  const receipt = (issue: Issue): EffectReceipt => ({
    externalId: String(issue.id),
    link: issue.html_url,
    data: { number: issue.number, title: issue.title },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'issue',
    kind: 'github.issue_create',
    target: `repo ${o.repo}`,
    payload: {
      repo: o.repo,
      title,
      ...(body === undefined ? {} : { body }),
      ...(labels === undefined ? {} : { labels }),
    },
    async send(key) {
      try {
        const { data } = await o.octokit.rest.issues.create({
          owner: o.owner,
          repo: o.name,
          title,
          body: withMarker(body, key),
          ...(labels === undefined ? {} : { labels }),
        });
        return receipt(data);
      } catch (error) {
        throw deliveryError('creating the issue', o.settings, error);
      }
    },
    async lookup(key) {
      // The creator filter needs the account's login: read only when reconciling. An app's bot
      // login is not a documented `creator` value, so in app mode the repository's newest issues
      // are read instead (the marker alone identifies ours).
      let creator: string | undefined;
      if (o.settings.auth.mode === 'token') {
        const who = await connect(ctx, o.settings, { identity: true });
        if (!who.ok || !who.connection.identity) throw new Error('the identity could not be read');
        creator = who.connection.identity.login;
      }
      const { data } = await o.octokit.rest.issues.listForRepo({
        owner: o.owner,
        repo: o.name,
        ...(creator === undefined ? {} : { creator }),
        state: 'all',
        sort: 'created',
        direction: 'desc',
        per_page: LOOKUP_ISSUES,
      });
      const found = data.find((issue) => hasMarker(issue.body, key));
      return found ? receipt(found) : undefined;
    },
  });
  return deliveryOutput(`opening the issue in ${o.repo}`, delivery, (r) => ({
    text: `Opened issue #${numberOf(r)} in ${o.repo}: ${r.link ?? ''}`,
    data: { id: r.externalId, html_url: r.link ?? null, ...r.data },
  }));
}

/**
 * Comments on an issue or a pull request. A lost answer is reconciled by reading the newest
 * comments of that issue (the last two pages) for our marker.
 */
export async function commentOnGithubIssue(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await open(ctx, 'comment_on_github_issue', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  const body = args['body'] as string;
  type Comment = { id: number; html_url: string };
  const receipt = (comment: Comment): EffectReceipt => ({
    externalId: String(comment.id),
    link: comment.html_url,
    data: { number },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'comment',
    kind: 'github.issue_comment_create',
    target: `${o.repo}#${number}`,
    payload: { repo: o.repo, number, body },
    async send(key) {
      try {
        const { data } = await o.octokit.rest.issues.createComment({
          owner: o.owner,
          repo: o.name,
          issue_number: number,
          body: withMarker(body, key),
        });
        return receipt(data);
      } catch (error) {
        throw deliveryError(`commenting on #${number}`, o.settings, error);
      }
    },
    async lookup(key) {
      const comments = await newest((page) =>
        o.octokit.rest.issues.listComments({
          owner: o.owner,
          repo: o.name,
          issue_number: number,
          per_page: LOOKUP_PAGE,
          page,
        }),
      );
      const found = comments.find((c) => hasMarker(c.body, key));
      return found ? receipt(found) : undefined;
    },
  });
  return deliveryOutput(`commenting on ${o.repo}#${number}`, delivery, (r) => ({
    text: `Commented on ${o.repo}#${number}: ${r.link ?? ''}`,
    data: { id: r.externalId, html_url: r.link ?? null, number },
  }));
}

/**
 * Submits a review of a pull request. A lost answer is reconciled by reading the pull request's
 * newest reviews (the last two pages) for our marker.
 */
export async function createGithubPullRequestReview(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const event = args['event'] as 'COMMENT' | 'APPROVE' | 'REQUEST_CHANGES';
  const body = typeof args['body'] === 'string' ? args['body'] : undefined;
  if (event !== 'APPROVE' && (body === undefined || body.trim() === ''))
    throw new InvalidToolInputError(`field \`body\` is required when \`event\` is ${event}`);
  const started = await open(ctx, 'create_github_pull_request_review', args);
  if (!started.ok) return started.out;
  const o = started.opened;
  const number = args['number'] as number;
  type Review = { id: number; html_url: string; state: string };
  const receipt = (review: Review): EffectReceipt => ({
    externalId: String(review.id),
    link: review.html_url,
    data: { number, state: review.state },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'review',
    kind: 'github.pull_request_review_create',
    target: `${o.repo}#${number}`,
    payload: { repo: o.repo, number, event, ...(body === undefined ? {} : { body }) },
    async send(key) {
      try {
        const { data } = await o.octokit.rest.pulls.createReview({
          owner: o.owner,
          repo: o.name,
          pull_number: number,
          event,
          body: withMarker(body, key),
        });
        return receipt(data);
      } catch (error) {
        throw deliveryError(`reviewing pull request #${number}`, o.settings, error);
      }
    },
    async lookup(key) {
      const reviews = await newest((page) =>
        o.octokit.rest.pulls.listReviews({
          owner: o.owner,
          repo: o.name,
          pull_number: number,
          per_page: LOOKUP_PAGE,
          page,
        }),
      );
      const found = reviews.find((r) => hasMarker(r.body, key));
      return found ? receipt(found) : undefined;
    },
  });
  return deliveryOutput(`reviewing ${o.repo}#${number}`, delivery, (r) => ({
    text: `Submitted a ${event} review of ${o.repo}#${number}: ${r.link ?? ''}`,
    data: { id: r.externalId, html_url: r.link ?? null, number, event },
  }));
}
