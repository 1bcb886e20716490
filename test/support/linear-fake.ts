import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of Linear's GraphQL API (POST <url> with `{query, variables}`, JSON answers with
 * `data` and `errors`, the error `extensions.type` vocabulary the SDK reads). It checks the agent's
 * personal API key the way Linear does (the raw key in `Authorization`, no scheme) and records
 * every operation it received. It dispatches on the operation's root field rather than executing
 * GraphQL: enough for the documents the package sends, and every answer carries all the fields
 * those documents select.
 */

export interface FakeState {
  readonly id: string;
  readonly name: string;
}

export interface FakeTeam {
  readonly id: string;
  readonly key: string;
  readonly states: readonly FakeState[];
}

export interface FakeIssue {
  readonly id: string;
  readonly identifier: string;
  readonly title: string;
  readonly description: string | null;
  readonly priority: number | null;
  readonly teamId: string;
  stateId: string;
  readonly url: string;
}

export interface FakeComment {
  readonly id: string;
  readonly issueId: string;
  readonly body: string;
  readonly url: string;
}

export interface FakeWebhook {
  readonly id: string;
  readonly url: string;
  readonly label: string | null;
  readonly resourceTypes: readonly string[];
  readonly allPublicTeams: boolean;
  enabled: boolean;
}

/** One operation as received. */
export interface LinearReceived {
  /** The root field: `issueCreate`, `issue`, `teams`… */
  readonly field: string;
  readonly variables: Record<string, unknown>;
  /** Whether the Authorization header carried a key the fake knows. */
  readonly authorized: boolean;
}

/**
 * A failure to answer the next mutation with: `ratelimited` (HTTP 429, not applied),
 * `internal` (HTTP 500, not applied), `lost` (applied, then answered 500: the answer was lost),
 * `forbidden` (Linear's Forbidden error, not applied: the account may not do it).
 */
export type LinearFailure = 'ratelimited' | 'internal' | 'lost' | 'forbidden';

export interface LinearFake {
  /** `http://127.0.0.1:<port>/graphql`: what `api_url` is set to. */
  readonly url: string;
  /** API keys the fake accepts. */
  readonly keys: Set<string>;
  readonly teams: FakeTeam[];
  readonly issues: Map<string, FakeIssue>;
  readonly comments: Map<string, FakeComment>;
  /** Webhooks registered through `webhookCreate`, by id. */
  readonly webhooks: Map<string, FakeWebhook>;
  readonly received: LinearReceived[];
  /**
   * Called after a mutation was applied and before it is answered (a test kills its client
   * there: the vendor acted, the answer never arrives).
   */
  afterApply?: (field: string) => void;
  /** Failures the next mutations meet, in order. */
  readonly failures: LinearFailure[];
  /** How many times each entity id was asked to be created (a duplicate shows as 2). */
  readonly createRequests: Map<string, number>;
  reset(): void;
  close(): Promise<void>;
}

const MUTATIONS = new Set([
  'issueCreate',
  'commentCreate',
  'issueUpdate',
  'webhookCreate',
  'webhookUpdate',
  'webhookDelete',
]);

function graphqlError(type: string, message: string) {
  return { errors: [{ message, extensions: { type, userPresentableMessage: message } }] };
}

/** Starts the fake with one team, ENG, and its workflow states. */
export async function startLinearFake(): Promise<LinearFake> {
  const teams: FakeTeam[] = [];
  const issues = new Map<string, FakeIssue>();
  const comments = new Map<string, FakeComment>();
  const webhooks = new Map<string, FakeWebhook>();
  const received: LinearReceived[] = [];
  const failures: LinearFailure[] = [];
  const createRequests = new Map<string, number>();
  const keys = new Set<string>();
  let counter = 0;
  let base = '';

  const seed = () => {
    counter = 0;
    teams.length = 0;
    teams.push({
      id: randomUUID(),
      key: 'ENG',
      states: ['Backlog', 'Todo', 'In Progress', 'Done'].map((name) => ({
        id: randomUUID(),
        name,
      })),
    });
  };
  seed();

  const issueView = (issue: FakeIssue) => {
    const team = teams.find((t) => t.id === issue.teamId);
    const state = team?.states.find((s) => s.id === issue.stateId);
    return {
      id: issue.id,
      identifier: issue.identifier,
      title: issue.title,
      description: issue.description,
      url: issue.url,
      state: state ? { id: state.id, name: state.name } : null,
      team: team
        ? { id: team.id, key: team.key, states: { nodes: team.states.map((s) => ({ ...s })) } }
        : null,
      assignee: null,
    };
  };
  const findIssue = (id: string) =>
    issues.get(id) ?? [...issues.values()].find((i) => i.identifier === id.toUpperCase());
  const notFound = () => graphqlError('invalid input', 'Entity not found');

  /** The answer to one operation: an HTTP status and a body. */
  const answer = (field: string, v: Record<string, unknown>): [number, unknown] => {
    switch (field) {
      case 'teams': {
        const key = ((v['key'] as string | undefined) ?? '').toUpperCase();
        return [200, { data: { teams: { nodes: teams.filter((t) => t.key === key) } } }];
      }
      case 'issue': {
        const issue = findIssue(String(v['id']));
        return issue ? [200, { data: { issue: issueView(issue) } }] : [200, notFound()];
      }
      case 'searchIssues': {
        const term = String(v['term']).toLowerCase();
        const nodes = [...issues.values()]
          .filter((i) => `${i.title} ${i.description ?? ''}`.toLowerCase().includes(term))
          .slice(0, Number(v['first'] ?? 50))
          .map(issueView);
        return [200, { data: { searchIssues: { nodes } } }];
      }
      case 'comment': {
        const comment = comments.get(String(v['id']));
        return comment
          ? [200, { data: { comment: { id: comment.id, url: comment.url } } }]
          : [200, notFound()];
      }
      case 'issueCreate': {
        const input = v['input'] as Record<string, unknown>;
        const id = typeof input['id'] === 'string' ? input['id'] : randomUUID();
        createRequests.set(id, (createRequests.get(id) ?? 0) + 1);
        if (issues.has(id)) return [200, graphqlError('invalid input', 'Entity already exists')];
        const team = teams.find((t) => t.id === input['teamId']);
        if (!team) return [200, graphqlError('invalid input', 'Team not found')];
        const identifier = `${team.key}-${++counter}`;
        const issue: FakeIssue = {
          id,
          identifier,
          title: String(input['title']),
          description: typeof input['description'] === 'string' ? input['description'] : null,
          priority: typeof input['priority'] === 'number' ? input['priority'] : null,
          teamId: team.id,
          stateId: team.states[0]?.id ?? '',
          url: `${base}/issue/${identifier}`,
        };
        issues.set(id, issue);
        return [200, { data: { issueCreate: { success: true, issue: issueView(issue) } } }];
      }
      case 'commentCreate': {
        const input = v['input'] as Record<string, unknown>;
        const id = typeof input['id'] === 'string' ? input['id'] : randomUUID();
        createRequests.set(id, (createRequests.get(id) ?? 0) + 1);
        if (comments.has(id)) return [200, graphqlError('invalid input', 'Entity already exists')];
        const issue = findIssue(String(input['issueId']));
        if (!issue) return [200, notFound()];
        const comment = {
          id,
          issueId: issue.id,
          body: String(input['body']),
          url: `${issue.url}#comment-${id.slice(0, 8)}`,
        };
        comments.set(id, comment);
        return [
          200,
          { data: { commentCreate: { success: true, comment: { id, url: comment.url } } } },
        ];
      }
      case 'viewer':
        return [200, { data: { viewer: { id: 'user-agent', name: 'Mesh Agent' } } }];
      case 'webhook': {
        const hook = webhooks.get(String(v['id']));
        return hook ? [200, { data: { webhook: { ...hook } } }] : [200, notFound()];
      }
      case 'webhookCreate': {
        const input = v['input'] as Record<string, unknown>;
        const id = typeof input['id'] === 'string' ? input['id'] : randomUUID();
        createRequests.set(id, (createRequests.get(id) ?? 0) + 1);
        if (webhooks.has(id)) return [200, graphqlError('invalid input', 'Entity already exists')];
        if (typeof input['url'] !== 'string' || !Array.isArray(input['resourceTypes']))
          return [200, graphqlError('invalid input', 'url and resourceTypes are required')];
        const hook: FakeWebhook = {
          id,
          url: input['url'],
          label: typeof input['label'] === 'string' ? input['label'] : null,
          resourceTypes: input['resourceTypes'].map(String),
          allPublicTeams: input['allPublicTeams'] === true,
          enabled: input['enabled'] !== false,
        };
        webhooks.set(id, hook);
        return [200, { data: { webhookCreate: { success: true, webhook: { ...hook } } } }];
      }
      case 'webhookUpdate': {
        const hook = webhooks.get(String(v['id']));
        if (!hook) return [200, notFound()];
        const input = v['input'] as Record<string, unknown>;
        const updated = {
          ...hook,
          ...(typeof input['url'] === 'string' ? { url: input['url'] } : {}),
        };
        webhooks.set(hook.id, updated);
        return [200, { data: { webhookUpdate: { success: true, webhook: { ...updated } } } }];
      }
      case 'webhookDelete': {
        const id = String(v['id']);
        if (!webhooks.delete(id)) return [200, notFound()];
        return [200, { data: { webhookDelete: { success: true } } }];
      }
      case 'issueUpdate': {
        const issue = findIssue(String(v['id']));
        if (!issue) return [200, notFound()];
        const input = v['input'] as Record<string, unknown>;
        if (typeof input['stateId'] === 'string') issue.stateId = input['stateId'];
        return [200, { data: { issueUpdate: { success: true, issue: issueView(issue) } } }];
      }
      default:
        return [
          400,
          graphqlError('graphql error', `Cannot query field "${field}" on type "Query".`),
        ];
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res
        .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
        .end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || req.url !== '/graphql') return send(404, { error: 'not found' });
    let parsed: { query?: unknown; variables?: unknown };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      return send(400, graphqlError('graphql error', 'Body is not JSON'));
    }
    const query = typeof parsed.query === 'string' ? parsed.query : '';
    const field = /\{\s*([A-Za-z]+)\s*[({]/.exec(query)?.[1] ?? '';
    const variables = (parsed.variables ?? {}) as Record<string, unknown>;
    const authorized = keys.has(req.headers.authorization ?? '');
    received.push({ field, variables, authorized });
    if (!authorized)
      return send(
        400,
        graphqlError('authentication error', 'Authentication required, not authenticated'),
      );
    const failure = MUTATIONS.has(field) ? failures.shift() : undefined;
    if (failure === 'ratelimited')
      return send(429, graphqlError('ratelimited', 'Rate limit exceeded'), { 'retry-after': '0' });
    if (failure === 'internal') return send(500, graphqlError('internal error', 'Internal error'));
    if (failure === 'forbidden')
      return send(400, graphqlError('forbidden', 'You do not have permission to do this'));
    const [status, payload] = answer(field, variables);
    if (MUTATIONS.has(field)) fake.afterApply?.(field);
    if (failure === 'lost') return send(500, graphqlError('internal error', 'Internal error'));
    return send(status, payload);
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: LinearFake = {
    url: `${base}/graphql`,
    keys,
    teams,
    issues,
    comments,
    webhooks,
    received,
    failures,
    createRequests,
    reset() {
      issues.clear();
      comments.clear();
      webhooks.clear();
      received.length = 0;
      failures.length = 0;
      createRequests.clear();
      seed();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
