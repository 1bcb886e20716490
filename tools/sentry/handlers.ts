import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { deliveryOutput, OUTBOX, type EffectReceipt } from '../../src/tool/outbound.ts';
import {
  connect,
  deliveryError,
  failureText,
  type SentryAnswer,
  type SentryRequest,
} from './sentry-client.ts';
import {
  actorText,
  eventExcerpt,
  isIssue,
  issueData,
  issueLine,
  type SentryActor,
  type SentryIssue,
} from './sentry-views.ts';
import { sentrySettings, type SentrySettings } from './settings.ts';
import { refused } from '../../src/tool/package-support.ts';

// The arguments were decoded against the manifest's schema before a handler runs: an issue is a
// numeric id or a short id (PROJ-12), lengths and ranges are bounded.

const DEFAULT_LIMIT = 10;
const DEFAULT_QUERY = 'is:unresolved';

type Failure = Exclude<SentryAnswer, { kind: 'ok' }>;

interface Opened {
  readonly settings: SentrySettings;
  readonly request: SentryRequest;
  /** `/organizations/<slug>`: the prefix of every path the package calls. */
  readonly org: string;
}

/** Settings and a connection for one call, or the observation that says why not. */
async function open(
  ctx: ToolContext,
  tool: string,
): Promise<{ ok: true; opened: Opened } | { ok: false; out: ToolOutput }> {
  const outcome = sentrySettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  const { settings } = outcome;
  return {
    ok: true,
    opened: {
      settings,
      request: await connect(ctx, settings),
      org: `/organizations/${encodeURIComponent(settings.organization)}`,
    },
  };
}

/** What a 404 did not find, with the organization it was looked for in. */
function where(opened: Opened, subject: string): string {
  return `${subject} in organization ${opened.settings.organization}`;
}

/** An answer that is not the JSON the endpoint documents: handled as no answer at all. */
const MALFORMED: Failure = {
  kind: 'unreachable',
  reason: 'Sentry answered with an unexpected body',
};

/**
 * Reads an issue by numeric id or short id; a short id is first resolved to the issue's id
 * through `/shortids/`, the endpoint Sentry documents for it.
 */
async function readIssue(
  { request, org }: Opened,
  issue: string,
): Promise<{ ok: true; issue: SentryIssue } | { ok: false; failure: Failure }> {
  let id = issue;
  if (!/^[0-9]+$/.test(issue)) {
    const resolved = await request('GET', `${org}/shortids/${encodeURIComponent(issue)}/`);
    if (resolved.kind !== 'ok') return { ok: false, failure: resolved };
    const groupId = (resolved.body as { groupId?: unknown } | null)?.groupId;
    if (typeof groupId !== 'string' && typeof groupId !== 'number')
      return { ok: false, failure: MALFORMED };
    id = String(groupId);
  }
  const answer = await request('GET', `${org}/issues/${encodeURIComponent(id)}/`);
  if (answer.kind !== 'ok') return { ok: false, failure: answer };
  return isIssue(answer.body)
    ? { ok: true, issue: answer.body }
    : { ok: false, failure: MALFORMED };
}

/**
 * Settings, a connection and the issue `args.issue` names, read for one call; or the
 * observation that says why not (a bad setting, a refused token, an issue that is not there).
 */
async function openIssue(
  ctx: ToolContext,
  tool: string,
  args: JsonObject,
): Promise<{ ok: true; opened: Opened; issue: SentryIssue } | { ok: false; out: ToolOutput }> {
  const started = await open(ctx, tool);
  if (!started.ok) return started;
  const { opened } = started;
  const target = args['issue'] as string;
  const read = await readIssue(opened, target);
  if (!read.ok)
    return {
      ok: false,
      out: refused(
        failureText(
          `reading issue ${target}`,
          where(opened, `issue ${target}`),
          opened.settings,
          read.failure,
        ),
      ),
    };
  return { ok: true, opened, issue: read.issue };
}

/** Lists the organization's issues matching a Sentry search query. */
export async function listSentryIssues(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await open(ctx, 'list_sentry_issues');
  if (!started.ok) return started.out;
  const { opened } = started;
  const query = typeof args['query'] === 'string' ? args['query'] : DEFAULT_QUERY;
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_LIMIT;
  const params = new URLSearchParams({ query, limit: String(limit) });
  if (typeof args['project'] === 'number') params.set('project', String(args['project']));
  if (typeof args['environment'] === 'string') params.set('environment', args['environment']);
  if (typeof args['stats_period'] === 'string') params.set('statsPeriod', args['stats_period']);
  const answer = await opened.request('GET', `${opened.org}/issues/`, { params });
  if (answer.kind !== 'ok')
    return refused(
      failureText(
        'the issue list',
        `organization ${opened.settings.organization}, or no project with that id in it`,
        opened.settings,
        answer,
      ),
    );
  if (!Array.isArray(answer.body))
    return refused(failureText('the issue list', 'issue list', opened.settings, MALFORMED));
  // Sentry pages by cursor; the limit caps what one call returns whatever the server sends.
  const issues = answer.body.filter(isIssue).slice(0, limit);
  return {
    text:
      issues.length === 0
        ? `No Sentry issues match ${JSON.stringify(query)}.`
        : issues.map(issueLine).join('\n'),
    data: { query, issues: issues.map(issueData) },
  };
}

/** Reads one issue. */
export async function getSentryIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await openIssue(ctx, 'get_sentry_issue', args);
  if (!started.ok) return started.out;
  const { issue } = started;
  return {
    text: [
      issueLine(issue),
      `Culprit: ${issue.culprit ?? 'unknown'}; level ${issue.level ?? 'unknown'}; project ${issue.project?.slug ?? 'unknown'}.`,
      `First seen ${issue.firstSeen ?? 'unknown'}; assigned to ${actorText(issue.assignedTo)}.`,
    ].join('\n'),
    data: {
      ...issueData(issue),
      level: issue.level ?? null,
      project: issue.project?.slug ?? null,
      firstSeen: issue.firstSeen ?? null,
      assignedTo: issue.assignedTo ? `${issue.assignedTo.type}:${issue.assignedTo.id}` : null,
    },
  };
}

/** Reads the latest event of an issue, excerpted. */
export async function getSentryLatestEvent(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const started = await openIssue(ctx, 'get_sentry_latest_event', args);
  if (!started.ok) return started.out;
  const { opened, issue } = started;
  const answer = await opened.request(
    'GET',
    `${opened.org}/issues/${encodeURIComponent(issue.id)}/events/latest/`,
  );
  if (answer.kind !== 'ok')
    return refused(
      failureText(
        `reading the latest event of ${issue.shortId}`,
        where(opened, `event for issue ${issue.shortId}`),
        opened.settings,
        answer,
      ),
    );
  const excerpt = eventExcerpt(answer.body);
  return {
    text: `Latest event of ${issue.shortId} ${issue.title}:\n${excerpt.text}`,
    data: { issue: issue.shortId, ...excerpt.data },
  };
}

function issueReceipt(issue: SentryIssue): EffectReceipt {
  return {
    externalId: issue.id,
    ...(issue.permalink ? { link: issue.permalink } : {}),
    data: {
      shortId: issue.shortId,
      status: issue.status,
      inNextRelease: issue.statusDetails?.['inNextRelease'] === true,
      assignedTo: issue.assignedTo ? actorText(issue.assignedTo) : null,
    },
  };
}

/** Reads the issue back for a lookup; throws when Sentry cannot say (the outcome stays unknown). */
async function readBack(opened: Opened, issue: SentryIssue): Promise<SentryIssue> {
  const read = await readIssue(opened, issue.id);
  if (!read.ok)
    throw new Error(
      failureText(
        `reading issue ${issue.shortId} back`,
        where(opened, `issue ${issue.shortId}`),
        opened.settings,
        read.failure,
      ),
    );
  return read.issue;
}

/** One PUT of the issue's attributes, as one attempt of an effect. */
async function updateIssue(
  opened: Opened,
  issue: SentryIssue,
  what: string,
  body: Record<string, unknown>,
  expected: (now: SentryIssue) => SentryIssue,
): Promise<EffectReceipt> {
  const answer = await opened.request(
    'PUT',
    `${opened.org}/issues/${encodeURIComponent(issue.id)}/`,
    { body },
  );
  if (answer.kind !== 'ok')
    throw deliveryError(what, where(opened, `issue ${issue.shortId}`), opened.settings, answer);
  // The answer is the updated issue; if it is not, the update was still accepted.
  return issueReceipt(isIssue(answer.body) ? answer.body : expected(issue));
}

/**
 * Resolves an issue. Setting a status is idempotent in itself, and the lookup reads the issue
 * back: an attempt whose answer was lost is settled by what the issue says now.
 */
export async function resolveSentryIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await openIssue(ctx, 'resolve_sentry_issue', args);
  if (!started.ok) return started.out;
  const { opened, issue } = started;
  const inNextRelease = args['in_next_release'] === true;
  const status = inNextRelease ? 'resolvedInNextRelease' : 'resolved';
  const resolved = (now: SentryIssue) =>
    now.status === 'resolved' && (!inNextRelease || now.statusDetails?.['inNextRelease'] === true);
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'resolve',
    kind: 'sentry.issue_resolve',
    target: `issue ${issue.shortId}`,
    payload: { issueId: issue.id, status },
    send: () =>
      updateIssue(opened, issue, `resolving ${issue.shortId}`, { status }, (now) => ({
        ...now,
        status: 'resolved',
        statusDetails: inNextRelease ? { inNextRelease: true } : {},
      })),
    async lookup() {
      const now = await readBack(opened, issue);
      return resolved(now) ? issueReceipt(now) : undefined;
    },
  });
  const how = inNextRelease ? 'resolved in the next release' : 'resolved';
  return deliveryOutput(`resolving ${issue.shortId}`, delivery, (r) => ({
    text: `Marked ${issue.shortId} ${how}: ${r.link ?? ''}`.trimEnd(),
    data: { id: r.externalId, permalink: r.link ?? null, ...r.data },
  }));
}

/**
 * Whether the issue's assignee is the one asked for. `user:<id>` and `team:<id>` compare ids,
 * an email compares the user's email; a bare username cannot be compared (Sentry's actor shows
 * no username), so such an assignment is sent again after a lost answer, which is harmless.
 */
function assignedAs(actor: SentryActor | null | undefined, wanted: string): boolean {
  if (!actor) return false;
  const byId = /^(user|team):([0-9]+)$/.exec(wanted);
  if (byId) return actor.type === byId[1] && actor.id === byId[2];
  if (wanted.includes('@'))
    return actor.type === 'user' && actor.email?.toLowerCase() === wanted.toLowerCase();
  return false;
}

/** Assigns an issue to a user or team; idempotent like resolving, and looked up the same way. */
export async function assignSentryIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const started = await openIssue(ctx, 'assign_sentry_issue', args);
  if (!started.ok) return started.out;
  const { opened, issue } = started;
  const assignee = args['assignee'] as string;
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'assign',
    kind: 'sentry.issue_assign',
    target: `issue ${issue.shortId}`,
    payload: { issueId: issue.id, assignedTo: assignee },
    send: () =>
      updateIssue(
        opened,
        issue,
        `assigning ${issue.shortId}`,
        { assignedTo: assignee },
        (now) => now,
      ),
    async lookup() {
      const now = await readBack(opened, issue);
      return assignedAs(now.assignedTo, assignee) ? issueReceipt(now) : undefined;
    },
  });
  return deliveryOutput(`assigning ${issue.shortId}`, delivery, (r) => {
    const to = typeof r.data?.['assignedTo'] === 'string' ? r.data['assignedTo'] : assignee;
    return {
      text: `Assigned ${issue.shortId} to ${to}: ${r.link ?? ''}`.trimEnd(),
      data: { id: r.externalId, permalink: r.link ?? null, ...r.data },
    };
  });
}
