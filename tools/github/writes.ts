import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { InvalidToolInputError } from '../../src/tool/errors.ts';
import {
  DeliveryError,
  deliveryOutput,
  OUTBOX,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import { refused } from '../../src/tool/package-support.ts';
import { connect, deliveryError, failureText, httpFailure } from './github-client.ts';
import { hasMarker, newest, open, withMarker } from './github-call.ts';

// Pull requests, issues, comments and reviews as effects through the outbound machinery: each body carries our
// marker (github-call.ts), and each lookup reads back what the account wrote recently for it.

/** How many of the newest issues the agent created a lookup reads. */
const LOOKUP_ISSUES = 100;
/** Comments and reviews are listed oldest first: a lookup reads the last two pages of this size. */
const LOOKUP_PAGE = 100;

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

/**
 * Opens a pull request from `head` into `base` (the default branch when omitted), through the
 * outbound machinery. The body carries our marker; a lost answer is reconciled by listing the
 * pull requests from that head into that base (GitHub keeps at most one open per pair) and
 * looking for it.
 */
export async function createGithubPullRequest(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await open(ctx, 'create_github_pull_request', args);
  if (!started.ok) return started.out;
  const { octokit, repo, owner, name, settings, redact } = started.opened;
  const notFound = () =>
    refused(
      `Repository ${repo} was not found on GitHub, or this agent's account cannot see it. Check the owner/name spelling.`,
    );

  let base = typeof args['base'] === 'string' ? args['base'] : undefined;
  if (base === undefined) {
    try {
      base = (await octokit.rest.repos.get({ owner, repo: name })).data.default_branch;
    } catch (error) {
      if (httpFailure(error)?.status === 404) return notFound();
      return refused(redact(failureText(`reading repository ${repo}`, settings, error)));
    }
  }
  const into = base;
  const head = args['head'] as string;
  const title = args['title'] as string;
  const body = typeof args['body'] === 'string' ? args['body'] : undefined;
  const draft = args['draft'] === true;
  type Pull = { number: number; html_url: string };
  const receipt = (pull: Pull): EffectReceipt => ({
    externalId: `${repo}#${pull.number}`,
    link: pull.html_url,
    data: { number: pull.number },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'pull_request',
    kind: 'github.pull_request_create',
    target: `repo ${repo}`,
    payload: { repo, head, base: into, title, ...(body === undefined ? {} : { body }), draft },
    async send(key) {
      try {
        const { data } = await octokit.rest.pulls.create({
          owner,
          repo: name,
          head,
          base: into,
          title,
          body: withMarker(body, key),
          ...(draft ? { draft: true } : {}),
        });
        return receipt(data);
      } catch (error) {
        const failure = httpFailure(error);
        if (failure?.status === 422)
          throw new DeliveryError(
            'terminal',
            redact(
              `GitHub refused the pull request from ${head} into ${into} (422): ${failure.message}. A pull request may already be open for this head, or the branch has no commits beyond ${into} (push them first).`,
            ),
          );
        if (failure?.status === 404)
          throw new DeliveryError(
            'terminal',
            `Repository ${repo} was not found on GitHub, or this agent's account cannot see it.`,
          );
        throw deliveryError('creating the pull request', settings, error);
      }
    },
    async lookup(key) {
      const { data } = await octokit.rest.pulls.list({
        owner,
        repo: name,
        head: head.includes(':') ? head : `${owner}:${head}`,
        base: into,
        state: 'all',
        per_page: 100,
      });
      const found = data.find((pull) => hasMarker(pull.body, key));
      return found ? receipt(found) : undefined;
    },
  });
  return deliveryOutput(`opening the pull request in ${repo}`, delivery, (r) => {
    const number = typeof r.data?.['number'] === 'number' ? r.data['number'] : null;
    return {
      text: `Opened pull request #${number ?? 'unknown'} in ${repo} (${head} into ${into}): ${r.link ?? ''}`,
      data: { number, html_url: r.link ?? null, head, base: into },
    };
  });
}
