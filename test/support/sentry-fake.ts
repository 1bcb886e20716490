import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of Sentry's REST API (https://docs.sentry.io/api/) under `/api/0`: the
 * organization issue list, issue details (GET and PUT), an issue's latest event and short-id
 * resolution, with Sentry's JSON shapes and its `{"detail": "…"}` error bodies. It checks the
 * agent's token the way Sentry does (`Authorization: Bearer <token>`), the token's scopes for
 * changes (event:write or event:admin), and records every request it received.
 */

export interface FakeActor {
  readonly type: 'user' | 'team';
  readonly id: string;
  readonly name: string;
  readonly email?: string;
  readonly username?: string;
}

export interface FakeIssue {
  readonly id: string;
  readonly shortId: string;
  readonly title: string;
  readonly culprit: string;
  status: string;
  statusDetails: Record<string, unknown>;
  assignedTo: FakeActor | null;
  readonly count: string;
  readonly userCount: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly level: string;
  readonly latestEvent: Record<string, unknown> | null;
}

/** One request as received. */
export interface SentryReceived {
  readonly method: string;
  /** The path below `/api/0`, e.g. `/organizations/acme/issues/1001/`. */
  readonly path: string;
  readonly params: Record<string, string>;
  readonly body: unknown;
  /** Whether the Authorization header carried `Bearer <a token the fake knows>`. */
  readonly authorized: boolean;
}

/**
 * A failure to answer the next PUT with: `ratelimited` (429 with Retry-After: 2, not applied),
 * `unavailable` (503, not applied), `lost` (applied, then answered 500), `dropped` (applied, then
 * the connection is destroyed without an answer).
 */
export type SentryFailure = 'ratelimited' | 'unavailable' | 'lost' | 'dropped';

export interface SentryFake {
  /** `http://127.0.0.1:<port>/api/0`: what `api_url` is set to. */
  readonly apiUrl: string;
  readonly organization: string;
  /** Tokens the fake accepts, with their scopes. */
  readonly tokens: Map<string, readonly string[]>;
  readonly issues: Map<string, FakeIssue>;
  readonly members: readonly FakeActor[];
  readonly received: SentryReceived[];
  /** Failures the next PUTs meet, in order. */
  readonly failures: SentryFailure[];
  reset(): void;
  close(): Promise<void>;
}

const ORG = 'acme';
const PROJECT = { id: '42', name: 'api', slug: 'api', platform: 'node' };

const MEMBERS: readonly FakeActor[] = [
  { type: 'user', id: '7', name: 'Mesh Agent', email: 'agent@example.com', username: 'mesh-agent' },
  { type: 'user', id: '8', name: 'Dana Ops', email: 'dana@example.com', username: 'dana' },
  { type: 'team', id: '3', name: 'backend' },
];

function latestEvent(): Record<string, unknown> {
  return {
    id: 'f3a1c0de9b2e4c5d8a7b6c5d4e3f2a1b',
    eventID: 'f3a1c0de9b2e4c5d8a7b6c5d4e3f2a1b',
    groupID: '1001',
    title: "TypeError: Cannot read properties of undefined (reading 'map')",
    message: '',
    platform: 'node',
    dateCreated: '2026-12-04T18:59:00Z',
    release: { version: 'api@1.4.2' },
    tags: [
      { key: 'environment', value: 'production' },
      { key: 'release', value: 'api@1.4.2' },
      { key: 'url', value: 'https://api.example.com/orders' },
    ],
    entries: [
      {
        type: 'exception',
        data: {
          values: [
            {
              type: 'TypeError',
              value: "Cannot read properties of undefined (reading 'map')",
              mechanism: { type: 'onunhandledrejection', handled: false },
              stacktrace: {
                // Oldest first, as Sentry sends them.
                frames: [
                  {
                    function: 'processTicksAndRejections',
                    filename: 'node:internal/process/task_queues',
                    lineNo: 95,
                    colNo: 5,
                    inApp: false,
                  },
                  {
                    function: 'handle',
                    filename: 'src/routes/orders.ts',
                    lineNo: 18,
                    colNo: 10,
                    inApp: true,
                    context: [[18, '  return listOrders(req.user);']],
                  },
                  {
                    function: 'listOrders',
                    filename: 'src/orders/list.ts',
                    lineNo: 42,
                    colNo: 23,
                    inApp: true,
                    context: [
                      [41, '  const rows = await db.orders(user);'],
                      [42, '  return rows.items.map(toView);'],
                    ],
                  },
                  {
                    function: 'Array.map',
                    filename: 'node:internal/array',
                    lineNo: 1,
                    colNo: 1,
                    inApp: false,
                  },
                ],
              },
            },
          ],
        },
      },
      { type: 'breadcrumbs', data: { values: [] } },
    ],
  };
}

/** Starts the fake with organization `acme`, project `api` (id 42) and two issues. */
export async function startSentryFake(): Promise<SentryFake> {
  const issues = new Map<string, FakeIssue>();
  const received: SentryReceived[] = [];
  const failures: SentryFailure[] = [];
  const tokens = new Map<string, readonly string[]>();

  const seed = () => {
    issues.clear();
    issues.set('1001', {
      id: '1001',
      shortId: 'API-1',
      title: "TypeError: Cannot read properties of undefined (reading 'map')",
      culprit: 'listOrders(src/orders/list)',
      status: 'unresolved',
      statusDetails: {},
      assignedTo: null,
      count: '132',
      userCount: 17,
      firstSeen: '2026-12-01T09:00:00Z',
      lastSeen: '2026-12-04T18:59:00Z',
      level: 'error',
      latestEvent: latestEvent(),
    });
    issues.set('1002', {
      id: '1002',
      shortId: 'API-2',
      title: 'Error: connect ECONNREFUSED 10.0.0.5:5432',
      culprit: 'db.connect(src/db)',
      status: 'resolved',
      statusDetails: {},
      assignedTo: null,
      count: '4',
      userCount: 1,
      firstSeen: '2026-11-20T09:00:00Z',
      lastSeen: '2026-11-21T10:00:00Z',
      level: 'error',
      latestEvent: null,
    });
  };
  seed();

  const actorView = (a: FakeActor | null) =>
    a === null
      ? null
      : a.type === 'user'
        ? { type: 'user', id: a.id, name: a.name, email: a.email }
        : { type: 'team', id: a.id, name: a.name };
  const issueView = (i: FakeIssue) => ({
    id: i.id,
    shortId: i.shortId,
    title: i.title,
    culprit: i.culprit,
    permalink: `https://${ORG}.sentry.io/issues/${i.id}/`,
    logger: null,
    level: i.level,
    status: i.status,
    statusDetails: i.statusDetails,
    substatus: i.status === 'unresolved' ? 'ongoing' : null,
    isPublic: false,
    platform: PROJECT.platform,
    project: PROJECT,
    type: 'error',
    metadata: { title: i.title },
    numComments: 0,
    assignedTo: actorView(i.assignedTo),
    isBookmarked: false,
    isSubscribed: false,
    hasSeen: false,
    annotations: [],
    issueCategory: 'error',
    count: i.count,
    userCount: i.userCount,
    firstSeen: i.firstSeen,
    lastSeen: i.lastSeen,
  });
  const findIssue = (id: string) =>
    issues.get(id) ?? [...issues.values()].find((i) => i.shortId === id.toUpperCase());

  const NOT_FOUND: [number, unknown] = [404, { detail: 'The requested resource does not exist' }];

  /** Sentry's search, as far as the tests use it: `is:<status>` and words of the title. */
  const matches = (issue: FakeIssue, query: string) =>
    query
      .split(/\s+/)
      .filter((t) => t !== '')
      .every((term) =>
        term.startsWith('is:')
          ? issue.status === term.slice(3)
          : issue.title.toLowerCase().includes(term.toLowerCase()),
      );

  const update = (issue: FakeIssue, body: Record<string, unknown>): [number, unknown] => {
    if ('assignedTo' in body) {
      const wanted = String(body['assignedTo']);
      const [kind, id] = wanted.split(':');
      const actor =
        MEMBERS.find((m) => (id !== undefined ? m.type === kind && m.id === id : false)) ??
        MEMBERS.find((m) => m.type === 'user' && (m.email === wanted || m.username === wanted));
      if (!actor) return [400, { assignedTo: ['Unknown actor input'] }];
      issue.assignedTo = actor;
    }
    if (typeof body['status'] === 'string') {
      switch (body['status']) {
        case 'resolved':
          issue.status = 'resolved';
          issue.statusDetails = {};
          break;
        case 'resolvedInNextRelease':
          issue.status = 'resolved';
          issue.statusDetails = { inNextRelease: true };
          break;
        case 'unresolved':
        case 'ignored':
          issue.status = body['status'];
          issue.statusDetails = {};
          break;
        default:
          return [400, { status: [`"${body['status']}" is not a valid choice.`] }];
      }
    }
    return [200, issueView(issue)];
  };

  const route = (
    method: string,
    path: string,
    params: URLSearchParams,
    body: unknown,
  ): [number, unknown] => {
    const parts = path.split('/').filter((p) => p !== '');
    if (parts[0] !== 'organizations') return NOT_FOUND;
    if (parts[1] !== ORG) return NOT_FOUND;
    const rest = parts.slice(2);
    if (method === 'GET' && rest.length === 1 && rest[0] === 'issues') {
      const project = params.get('project');
      if (project !== null && project !== PROJECT.id)
        return [403, { detail: 'You do not have permission to perform this action.' }];
      const limit = Math.min(Number(params.get('limit') ?? 100), 100);
      const query = params.get('query') ?? 'is:unresolved';
      return [
        200,
        [...issues.values()]
          .filter((i) => matches(i, query))
          .slice(0, limit)
          .map(issueView),
      ];
    }
    if (method === 'GET' && rest.length === 2 && rest[0] === 'shortids') {
      const issue = [...issues.values()].find((i) => i.shortId === rest[1]?.toUpperCase());
      if (!issue) return NOT_FOUND;
      return [
        200,
        {
          organizationSlug: ORG,
          projectSlug: PROJECT.slug,
          groupId: issue.id,
          group: issueView(issue),
          shortId: issue.shortId,
        },
      ];
    }
    if (rest[0] === 'issues' && rest.length >= 2) {
      // Sentry's issue endpoints take a numeric id (and, in fact, a short id too).
      const issue = findIssue(rest[1] ?? '');
      if (!issue) return NOT_FOUND;
      if (rest.length === 2 && method === 'GET') return [200, issueView(issue)];
      if (rest.length === 2 && method === 'PUT')
        return update(issue, (body ?? {}) as Record<string, unknown>);
      if (rest.length === 4 && rest[2] === 'events' && rest[3] === 'latest' && method === 'GET')
        return issue.latestEvent ? [200, { ...issue.latestEvent, groupID: issue.id }] : NOT_FOUND;
    }
    return NOT_FOUND;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(payload));
    };
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    if (!url.pathname.startsWith('/api/0/')) return send(404, { detail: 'Not found' });
    const path = url.pathname.slice('/api/0'.length);
    let body: unknown = null;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        return send(400, { detail: 'JSON parse error' });
      }
    }
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
    const scopes = token === undefined ? undefined : tokens.get(token);
    received.push({
      method,
      path,
      params: Object.fromEntries(url.searchParams),
      body,
      authorized: scopes !== undefined,
    });
    if (scopes === undefined) return send(401, { detail: 'Invalid token' });
    if (method === 'PUT') {
      if (!scopes.includes('event:write') && !scopes.includes('event:admin'))
        return send(403, { detail: 'You do not have permission to perform this action.' });
      const failure = failures.shift();
      if (failure === 'ratelimited')
        return send(
          429,
          {
            detail:
              'You are attempting to use this endpoint too frequently. Limit is 40 requests in 1 seconds',
          },
          { 'retry-after': '2' },
        );
      if (failure === 'unavailable') return send(503, { detail: 'Service unavailable' });
      const [status, payload] = route(method, path, url.searchParams, body);
      if (failure === 'lost') return send(500, { detail: 'Internal Error' });
      if (failure === 'dropped') {
        req.socket.destroy();
        return;
      }
      return send(status, payload);
    }
    const [status, payload] = route(method, path, url.searchParams, body);
    return send(status, payload);
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => handle(req, res, raw));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${base}/api/0`,
    organization: ORG,
    tokens,
    issues,
    members: MEMBERS,
    received,
    failures,
    reset() {
      received.length = 0;
      failures.length = 0;
      seed();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
