import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import {
  deliveryOutput,
  OUTBOX,
  type EffectKey,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import { connect, deliveryError, failureText, readById, type Request } from './linear-client.ts';
import { linearSettings, type LinearSettings } from './settings.ts';
import { refused } from '../../src/tool/package-support.ts';

// The arguments were decoded against the manifest's schema before a handler runs: identifiers
// match ENG-123 or a UUID, team keys their pattern, lengths are bounded.

const DEFAULT_LIMIT = 10;

interface IssueNode {
  readonly id: string;
  readonly identifier: string;
  readonly title: string;
  readonly url: string;
  readonly description?: string | null;
  readonly state?: { readonly id: string; readonly name: string } | null;
  readonly team?: { readonly id: string; readonly key: string } | null;
  readonly assignee?: { readonly name: string } | null;
}

const ISSUE_FIELDS = 'id identifier title url state { id name }';

/** Settings and a connection for one call, or the observation that says why not. */
async function open(
  ctx: ToolContext,
  tool: string,
): Promise<
  { ok: true; settings: LinearSettings; request: Request } | { ok: false; out: ToolOutput }
> {
  const outcome = linearSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  return { ok: true, settings: outcome.settings, request: await connect(ctx, outcome.settings) };
}

/** Reads an issue by identifier or id; undefined when Linear has none the account can see. */
function readIssue(request: Request, id: string, fields: string): Promise<IssueNode | undefined> {
  return readById<IssueNode>(request, 'issue', fields, id);
}

/** A stored receipt field as text (receipts are JSON the package wrote itself). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

function describeIssue(issue: IssueNode): string {
  return `${issue.identifier} ${issue.title} [${issue.state?.name ?? 'no state'}] ${issue.url}`;
}

/** Searches issues by text. */
export async function searchLinearIssues(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'search_linear_issues');
  if (!opened.ok) return opened.out;
  const term = args['query'] as string;
  const first = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_LIMIT;
  try {
    const data = await opened.request<{ searchIssues: { nodes: IssueNode[] } }>(
      `query MeshSearchIssues($term: String!, $first: Int) { searchIssues(term: $term, first: $first) { nodes { ${ISSUE_FIELDS} } } }`,
      { term, first },
    );
    const issues = data.searchIssues.nodes;
    return {
      text:
        issues.length === 0
          ? 'No Linear issues match.'
          : issues.map((issue) => describeIssue(issue)).join('\n'),
      data: {
        issues: issues.map((i) => ({
          id: i.id,
          identifier: i.identifier,
          title: i.title,
          state: i.state?.name ?? null,
          url: i.url,
        })),
      },
    };
  } catch (error) {
    return refused(failureText('the issue search', opened.settings, error));
  }
}

/** Reads one issue. */
export async function getLinearIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'get_linear_issue');
  if (!opened.ok) return opened.out;
  const id = args['issue'] as string;
  try {
    const issue = await readIssue(
      opened.request,
      id,
      `${ISSUE_FIELDS} description team { id key } assignee { name }`,
    );
    if (!issue)
      return refused(`Linear has no issue ${id} that this agent's Linear account can see.`);
    return {
      text: [
        describeIssue(issue),
        `Team ${issue.team?.key ?? 'unknown'}; assignee ${issue.assignee?.name ?? 'nobody'}.`,
        issue.description ? `\n${issue.description}` : '',
      ].join('\n'),
      data: {
        id: issue.id,
        identifier: issue.identifier,
        title: issue.title,
        state: issue.state?.name ?? null,
        team: issue.team?.key ?? null,
        assignee: issue.assignee?.name ?? null,
        url: issue.url,
      },
    };
  } catch (error) {
    return refused(failureText(`reading issue ${id}`, opened.settings, error));
  }
}

function issueReceipt(issue: IssueNode): EffectReceipt {
  return {
    externalId: issue.id,
    link: issue.url,
    data: { identifier: issue.identifier, title: issue.title, state: issue.state?.name ?? null },
  };
}

/**
 * Opens an issue. Our idempotency key is the new issue's client-supplied `id`, so an attempt whose
 * answer was lost is found again by reading that id: Linear never gets it twice.
 */
export async function createLinearIssue(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'create_linear_issue');
  if (!opened.ok) return opened.out;
  const { settings, request } = opened;
  const teamKey = (
    typeof args['team'] === 'string' ? args['team'] : settings.defaultTeam
  )?.toUpperCase();
  if (teamKey === undefined)
    return refused(
      'create_linear_issue needs a team: pass `team` (its key, e.g. ENG), or an operator sets the default_team setting.',
    );
  let teamId: string;
  try {
    const data = await request<{ teams: { nodes: { id: string; key: string }[] } }>(
      'query MeshTeam($key: String!) { teams(filter: { key: { eq: $key } }) { nodes { id key } } }',
      { key: teamKey },
    );
    const team = data.teams.nodes[0];
    if (!team)
      return refused(
        `Linear has no team with key ${teamKey} that this agent's account belongs to.`,
      );
    teamId = team.id;
  } catch (error) {
    return refused(failureText(`looking up team ${teamKey}`, settings, error));
  }
  const input = {
    teamId,
    title: args['title'] as string,
    ...(typeof args['description'] === 'string' ? { description: args['description'] } : {}),
    ...(typeof args['priority'] === 'number' ? { priority: args['priority'] } : {}),
  };
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'issue',
    kind: 'linear.issue_create',
    target: `team ${teamKey}`,
    payload: input,
    async send(key: EffectKey) {
      try {
        const data = await request<{ issueCreate: { success: boolean; issue: IssueNode | null } }>(
          `mutation MeshIssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { ${ISSUE_FIELDS} } } }`,
          { input: { id: key.uuid, ...input } },
        );
        const issue = data.issueCreate.issue;
        if (!data.issueCreate.success || !issue) throw new Error('not created');
        return issueReceipt(issue);
      } catch (error) {
        throw deliveryError('creating the issue', settings, error);
      }
    },
    async lookup(key: EffectKey) {
      const issue = await readIssue(request, key.uuid, ISSUE_FIELDS);
      return issue ? issueReceipt(issue) : undefined;
    },
  });
  return deliveryOutput(`opening the Linear issue in team ${teamKey}`, delivery, (receipt) => ({
    text: `Opened Linear issue ${textOf(receipt.data?.['identifier'])} in team ${teamKey}: ${receipt.link ?? ''}`,
    data: { id: receipt.externalId, url: receipt.link ?? null, ...receipt.data },
  }));
}

/** Comments on an issue; the comment's client-supplied id is our key, as for issues. */
export async function commentOnLinearIssue(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const opened = await open(ctx, 'comment_on_linear_issue');
  if (!opened.ok) return opened.out;
  const { settings, request } = opened;
  const target = args['issue'] as string;
  let issue: IssueNode | undefined;
  try {
    issue = await readIssue(request, target, ISSUE_FIELDS);
  } catch (error) {
    return refused(failureText(`reading issue ${target}`, settings, error));
  }
  if (!issue) return refused(`Linear has no issue ${target} that this agent's account can see.`);
  const input = { issueId: issue.id, body: args['body'] as string };
  type Comment = { id: string; url: string };
  const receipt = (comment: Comment): EffectReceipt => ({
    externalId: comment.id,
    link: comment.url,
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'comment',
    kind: 'linear.comment_create',
    target: `issue ${issue.identifier}`,
    payload: input,
    async send(key) {
      try {
        const data = await request<{
          commentCreate: { success: boolean; comment: Comment | null };
        }>(
          'mutation MeshCommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id url } } }',
          { input: { id: key.uuid, ...input } },
        );
        if (!data.commentCreate.success || !data.commentCreate.comment)
          throw new Error('not created');
        return receipt(data.commentCreate.comment);
      } catch (error) {
        throw deliveryError('creating the comment', settings, error);
      }
    },
    async lookup(key) {
      const comment = await readById<Comment>(request, 'comment', 'id url', key.uuid);
      return comment ? receipt(comment) : undefined;
    },
  });
  return deliveryOutput(`commenting on ${issue.identifier}`, delivery, (r) => ({
    text: `Commented on ${issue.identifier}: ${r.link ?? ''}`,
    data: { id: r.externalId, url: r.link ?? null },
  }));
}

/**
 * Moves an issue to a state of its team. Setting a state is idempotent in itself, and the lookup
 * reads the issue back: an attempt whose answer was lost is settled by what the issue says now.
 */
export async function updateLinearIssueState(
  ctx: ToolContext,
  args: JsonObject,
): Promise<ToolOutput> {
  const opened = await open(ctx, 'update_linear_issue_state');
  if (!opened.ok) return opened.out;
  const { settings, request } = opened;
  const target = args['issue'] as string;
  const wanted = (args['state'] as string).trim().toLowerCase();
  type WithStates = IssueNode & {
    team: { id: string; key: string; states: { nodes: { id: string; name: string }[] } };
  };
  let issue: WithStates | undefined;
  try {
    issue = (await readIssue(
      request,
      target,
      `${ISSUE_FIELDS} team { id key states { nodes { id name } } }`,
    )) as WithStates | undefined;
  } catch (error) {
    return refused(failureText(`reading issue ${target}`, settings, error));
  }
  if (!issue) return refused(`Linear has no issue ${target} that this agent's account can see.`);
  const states = issue.team.states.nodes;
  const state = states.find((s) => s.name.toLowerCase() === wanted);
  if (!state)
    return refused(
      `Team ${issue.team.key} has no state with that name. Its states: ${states.map((s) => s.name).join(', ')}.`,
    );
  const issueId = issue.id;
  const identifier = issue.identifier;
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'state',
    kind: 'linear.issue_update_state',
    target: `issue ${identifier}`,
    payload: { issueId, stateId: state.id, state: state.name },
    async send() {
      try {
        const data = await request<{ issueUpdate: { success: boolean; issue: IssueNode | null } }>(
          `mutation MeshIssueState($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success issue { ${ISSUE_FIELDS} } } }`,
          { id: issueId, input: { stateId: state.id } },
        );
        if (!data.issueUpdate.success || !data.issueUpdate.issue) throw new Error('not updated');
        return issueReceipt(data.issueUpdate.issue);
      } catch (error) {
        throw deliveryError('updating the state', settings, error);
      }
    },
    async lookup() {
      const now = await readIssue(request, issueId, ISSUE_FIELDS);
      return now?.state?.id === state.id ? issueReceipt(now) : undefined;
    },
  });
  return deliveryOutput(`moving ${identifier} to ${state.name}`, delivery, (r) => ({
    text: `Moved ${identifier} to ${state.name}: ${r.link ?? ''}`,
    data: { id: r.externalId, url: r.link ?? null, state: state.name },
  }));
}
