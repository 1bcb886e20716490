import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of DeepSource's GraphQL API (POST /graphql/ with `{query, variables}`, the
 * agent's personal access token as `Authorization: Bearer <token>`, answers with `data` and
 * graphene's `errors: [{message, locations, path}]`, HTTP 200 for GraphQL errors). It reads the
 * operation enough to answer the documents the package sends: the root field (`repository`,
 * `run`) and which connection of a repository is selected (`issues`, `pullRequest`,
 * `analysisRuns`), and it refuses a document that uses a variable it does not declare or leaves
 * a required one out, as a GraphQL server does. Every operation is recorded.
 */

export interface FakeOccurrence {
  readonly path: string;
  readonly beginLine: number;
}

export interface FakeIssue {
  readonly shortcode: string;
  readonly title: string;
  readonly category: string;
  readonly severity: string;
  readonly analyzer: string;
  readonly occurrences: readonly FakeOccurrence[];
}

export interface FakeCheck {
  readonly analyzer: string;
  readonly status: string;
  readonly introduced: number;
  readonly resolved: number;
}

export interface FakeRun {
  readonly runUid: string;
  readonly commitOid: string;
  readonly branchName: string;
  readonly status: string;
  readonly checks: readonly FakeCheck[];
}

export interface FakeRepo {
  readonly login: string;
  readonly name: string;
  readonly provider: string;
  /** The agent's account may not see it: "You do not have permission to perform this action". */
  readonly forbidden?: boolean;
  readonly issues: FakeIssue[];
  readonly pullRequests: { readonly number: number; readonly branch: string }[];
  /** Newest first. */
  readonly runs: FakeRun[];
}

/** One operation as received. */
export interface DeepSourceReceived {
  /** The operation's name (`MeshDeepSourceIssues`…). */
  readonly operation: string;
  /** What it asked for: `repository.issues`, `repository.pullRequest`, `run`… */
  readonly field: string;
  readonly variables: Record<string, unknown>;
  /** Whether the Authorization header carried `Bearer <a token the fake knows>`. */
  readonly authorized: boolean;
}

/** A failure the next operations meet, in order: HTTP 429 or 503 (both with `Retry-After: 0`). */
export type DeepSourceFailure = 'ratelimited' | 'unavailable';

export interface DeepSourceFake {
  /** `http://127.0.0.1:<port>/graphql/`: what `api_url` is set to. */
  readonly url: string;
  /** Tokens the fake accepts. */
  readonly tokens: Set<string>;
  readonly repos: FakeRepo[];
  readonly received: DeepSourceReceived[];
  readonly failures: DeepSourceFailure[];
  /** How an unknown token is refused: a GraphQL error (JWT's words) or HTTP 401. */
  badTokenAnswer: 'signature' | 'http401';
  reset(): void;
  close(): Promise<void>;
}

const ANALYZER_NAMES: Record<string, string> = {
  python: 'Python',
  javascript: 'JavaScript',
  docker: 'Docker',
  secrets: 'Secrets',
};

function cursor(index: number): string {
  return Buffer.from(`arrayconnection:${index}`).toString('base64');
}

function offsetOf(after: unknown): number {
  if (typeof after !== 'string') return 0;
  const match = /^arrayconnection:(\d+)$/.exec(Buffer.from(after, 'base64').toString());
  return match ? Number(match[1]) + 1 : 0;
}

function errorBody(message: string, path: string) {
  return {
    errors: [{ message, locations: [{ line: 2, column: 3 }], path: [path] }],
    data: { [path]: null },
  };
}

function analyzer(shortcode: string) {
  return { shortcode, name: ANALYZER_NAMES[shortcode] ?? shortcode };
}

function summary(introduced: number, resolved: number) {
  return {
    occurrencesIntroduced: introduced,
    occurrencesResolved: resolved,
    occurrencesSuppressed: 0,
  };
}

function runView(run: FakeRun) {
  const total = run.checks.reduce(
    (sum, c) => ({ i: sum.i + c.introduced, r: sum.r + c.resolved }),
    { i: 0, r: 0 },
  );
  return {
    runUid: run.runUid,
    commitOid: run.commitOid,
    branchName: run.branchName,
    status: run.status,
    summary: summary(total.i, total.r),
    checks: {
      edges: run.checks.map((c) => ({
        node: {
          status: c.status,
          analyzer: analyzer(c.analyzer),
          summary: summary(c.introduced, c.resolved),
        },
      })),
    },
  };
}

/** Variables a document uses but does not declare, and required ones it was not given. */
function variableProblem(
  query: string,
  operation: string,
  variables: Record<string, unknown>,
): string | undefined {
  const header = /^\s*query\s+\w+\s*\(([^)]*)\)/.exec(query)?.[1] ?? '';
  const declared = new Map(
    [...header.matchAll(/\$(\w+)\s*:\s*([\w[\]!]+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  const body = query.slice(query.indexOf('{'));
  for (const [, name] of body.matchAll(/:\s*\$(\w+)/g))
    if (name !== undefined && !declared.has(name))
      return `Variable "$${name}" is not defined by operation "${operation}".`;
  for (const [name, type] of declared)
    if (type.endsWith('!') && (variables[name] === undefined || variables[name] === null))
      return `Variable "$${name}" of required type "${type}" was not provided.`;
  return undefined;
}

/** Starts the fake with one repository, acme/api on GITHUB, and its issues, pull requests, runs. */
export async function startDeepSourceFake(): Promise<DeepSourceFake> {
  const tokens = new Set<string>();
  const repos: FakeRepo[] = [];
  const received: DeepSourceReceived[] = [];
  const failures: DeepSourceFailure[] = [];

  const seed = () => {
    repos.length = 0;
    repos.push(
      {
        login: 'acme',
        name: 'api',
        provider: 'GITHUB',
        issues: [
          {
            shortcode: 'PYL-W0612',
            title: 'Unused variable found',
            category: 'ANTI_PATTERN',
            severity: 'MINOR',
            analyzer: 'python',
            occurrences: [
              { path: 'api/views.py', beginLine: 12 },
              { path: 'api/models.py', beginLine: 40 },
              { path: 'api/models.py', beginLine: 77 },
              { path: 'api/admin.py', beginLine: 5 },
              { path: 'api/urls.py', beginLine: 9 },
            ],
          },
          {
            shortcode: 'BAN-B602',
            title: 'Subprocess call with shell=True',
            category: 'SECURITY',
            severity: 'CRITICAL',
            analyzer: 'python',
            occurrences: [{ path: 'scripts/deploy.py', beginLine: 31 }],
          },
          {
            shortcode: 'JS-0002',
            title: 'Avoid console in production code',
            category: 'BUG_RISK',
            severity: 'MAJOR',
            analyzer: 'javascript',
            occurrences: [{ path: 'web/app.js', beginLine: 3 }],
          },
        ],
        pullRequests: [
          { number: 42, branch: 'fix-login' },
          { number: 43, branch: 'not-analyzed-yet' },
        ],
        runs: [
          {
            runUid: '6a1f2c3d-4b5e-4f60-8a7b-9c0d1e2f3a4b',
            commitOid: 'b'.repeat(40),
            branchName: 'fix-login',
            status: 'FAILURE',
            checks: [
              { analyzer: 'python', status: 'FAILURE', introduced: 2, resolved: 1 },
              { analyzer: 'secrets', status: 'SUCCESS', introduced: 0, resolved: 0 },
            ],
          },
          {
            runUid: '0b9a8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
            commitOid: 'a'.repeat(40),
            branchName: 'fix-login',
            status: 'SUCCESS',
            checks: [{ analyzer: 'python', status: 'SUCCESS', introduced: 0, resolved: 0 }],
          },
        ],
      },
      {
        login: 'acme',
        name: 'secret-sauce',
        provider: 'GITHUB',
        forbidden: true,
        issues: [],
        pullRequests: [],
        runs: [],
      },
    );
  };
  seed();

  const findRepo = (v: Record<string, unknown>) =>
    repos.find(
      (r) => r.login === v['login'] && r.name === v['name'] && r.provider === v['provider'],
    );

  /** The answer to one operation: an HTTP status and a body. */
  const answer = (field: string, v: Record<string, unknown>): [number, unknown] => {
    if (field === 'run') {
      const found = repos
        .filter((r) => !r.forbidden)
        .flatMap((r) => r.runs.map((run) => ({ r, run })))
        .find(({ run }) => run.commitOid === v['commitOid']);
      if (!found) return [200, errorBody('AnalysisRun matching query does not exist.', 'run')];
      return [
        200,
        { data: { run: { ...runView(found.run), repository: { name: found.r.name } } } },
      ];
    }
    const repo = findRepo(v);
    if (!repo) return [200, errorBody('Repository matching query does not exist.', 'repository')];
    if (repo.forbidden)
      return [200, errorBody('You do not have permission to perform this action', 'repository')];
    switch (field) {
      case 'repository.issues': {
        const analyzers = Array.isArray(v['analyzerIn']) ? (v['analyzerIn'] as unknown[]) : null;
        const all = repo.issues.filter((i) => analyzers === null || analyzers.includes(i.analyzer));
        const start = offsetOf(v['after']);
        const first = Number(v['first']);
        const page = all.slice(start, start + first);
        const edges = page.map((issue, k) => ({
          cursor: cursor(start + k),
          node: {
            issue: {
              shortcode: issue.shortcode,
              title: issue.title,
              category: issue.category,
              severity: issue.severity,
              analyzer: analyzer(issue.analyzer),
            },
            occurrences: {
              totalCount: issue.occurrences.length,
              edges: issue.occurrences
                .slice(0, Number(v['occurrences']))
                .map((o) => ({ node: { path: o.path, beginLine: o.beginLine } })),
            },
          },
        }));
        const end = start + page.length;
        return [
          200,
          {
            data: {
              repository: {
                issues: {
                  pageInfo: {
                    hasNextPage: end < all.length,
                    endCursor: page.length > 0 ? cursor(end - 1) : null,
                  },
                  edges,
                },
              },
            },
          },
        ];
      }
      case 'repository.pullRequest': {
        const pr = repo.pullRequests.find((p) => p.number === v['number']);
        if (!pr)
          return [200, errorBody('PullRequest matching query does not exist.', 'repository')];
        return [200, { data: { repository: { pullRequest: { ...pr } } } }];
      }
      case 'repository.analysisRuns': {
        const runs = repo.runs
          .filter((r) => v['branch'] === undefined || r.branchName === v['branch'])
          .slice(0, Number(v['first'] ?? 1000) || 1);
        return [
          200,
          {
            data: {
              repository: { analysisRuns: { edges: runs.map((r) => ({ node: runView(r) })) } },
            },
          },
        ];
      }
      default:
        return [400, { errors: [{ message: `Cannot query field "${field}" on type "Query".` }] }];
    }
  };

  const fieldOf = (query: string): string => {
    const root = /\{\s*([A-Za-z]+)\s*[({]/.exec(query)?.[1] ?? '';
    if (root !== 'repository') return root;
    const nested = /\b(issues|pullRequest|analysisRuns)\s*\(/.exec(query)?.[1];
    return nested ? `repository.${nested}` : root;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(payload));
    };
    if (req.method !== 'POST' || req.url !== '/graphql/')
      return send(404, { detail: 'Not found.' });
    let parsed: { query?: unknown; variables?: unknown };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      return send(400, { errors: [{ message: 'Must provide query string.' }] });
    }
    const query = typeof parsed.query === 'string' ? parsed.query : '';
    const operation = /^\s*query\s+(\w+)/.exec(query)?.[1] ?? '';
    const field = fieldOf(query);
    const variables = (parsed.variables ?? {}) as Record<string, unknown>;
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = auth !== undefined && tokens.has(auth);
    received.push({ operation, field, variables, authorized });
    if (!authorized) {
      if (fake.badTokenAnswer === 'http401')
        return send(401, { detail: 'Authentication credentials were not provided.' });
      return send(200, errorBody('Signature has expired', field.split('.')[0] ?? field));
    }
    const failure = failures.shift();
    if (failure === 'ratelimited')
      return send(429, { detail: 'Request was throttled.' }, { 'retry-after': '0' });
    if (failure === 'unavailable')
      return send(503, { detail: 'Service unavailable' }, { 'retry-after': '0' });
    const problem = variableProblem(query, operation, variables);
    if (problem) return send(400, { errors: [{ message: problem }] });
    const [status, payload] = answer(field, variables);
    return send(status, payload);
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: DeepSourceFake = {
    url: `${base}/graphql/`,
    tokens,
    repos,
    received,
    failures,
    badTokenAnswer: 'signature',
    reset() {
      received.length = 0;
      failures.length = 0;
      fake.badTokenAnswer = 'signature';
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
