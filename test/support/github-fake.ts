import { createHash, createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A GitHub account a token belongs to. */
export interface FakeUser {
  readonly login: string;
  readonly id: number;
  readonly name: string | null;
  readonly email: string | null;
}

/** A repository the fake knows. */
export interface FakeRepo {
  readonly defaultBranch: string;
  readonly private?: boolean;
}

/** A GitHub App: its id, slug, the public half of its key and the installations it has. */
export interface FakeApp {
  readonly id: number;
  readonly slug: string;
  /** PEM (SPKI) or a KeyObject: app JWTs are verified against it. */
  readonly publicKey: string | KeyObject;
  readonly installations: readonly number[];
  /** The bot account's user id (`<slug>[bot]`). */
  readonly botId: number;
}

/** One file a pull request changes, as `GET /pulls/{n}/files` lists it. */
export interface FakeFile {
  readonly filename: string;
  readonly status: 'added' | 'modified' | 'removed' | 'renamed';
  readonly additions: number;
  readonly deletions: number;
  readonly previous_filename?: string;
}

/** One pull request as created (or seeded by a test, with the optional fields). */
export interface FakePull {
  readonly repo: string;
  readonly number: number;
  readonly title: string;
  readonly head: string;
  readonly base: string;
  readonly body: string | null;
  readonly draft: boolean;
  /** Who created it: the user's login, or the app bot's. */
  readonly by: string;
  readonly state?: 'open' | 'closed';
  readonly merged?: boolean;
  /** GitHub's `mergeable`: null while it is still computing. Default true. */
  readonly mergeable?: boolean | null;
  readonly mergeableState?: string;
  /** The head commit; default {@link headSha} of the repo and head. */
  readonly headSha?: string;
  readonly files?: readonly FakeFile[];
}

/** One issue as created (or seeded). Issues and pull requests share a repository's numbers. */
export interface FakeIssue {
  readonly repo: string;
  readonly number: number;
  readonly id: number;
  readonly title: string;
  readonly body: string | null;
  readonly state: 'open' | 'closed';
  readonly labels: readonly string[];
  readonly by: string;
  readonly createdAt: string;
}

/** One comment on an issue or a pull request's conversation. */
export interface FakeComment {
  readonly repo: string;
  readonly number: number;
  readonly id: number;
  readonly body: string;
  readonly by: string;
  readonly createdAt: string;
}

/** One submitted pull request review. */
export interface FakeReview {
  readonly repo: string;
  readonly number: number;
  readonly id: number;
  readonly state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  readonly body: string;
  readonly by: string;
  readonly commitId: string;
}

/** One check run on a commit. */
export interface FakeCheckRun {
  readonly name: string;
  readonly status: 'queued' | 'in_progress' | 'completed';
  readonly conclusion: string | null;
}

/**
 * A failure to answer the next request of `method` (default POST) with:
 * - `rate_limited`: 403 `API rate limit exceeded`, `x-ratelimit-remaining: 0` and
 *   `x-ratelimit-reset` `retryAfter` seconds from now (not applied);
 * - `secondary_rate_limited`: 403 with `retry-after: <retryAfter>` (not applied);
 * - `too_many_requests`: 429 with `retry-after: <retryAfter>` (not applied);
 * - `unavailable`: 502 (not applied);
 * - `lost`: applied, then answered 502 instead of its answer;
 * - `dropped`: applied, then the connection is destroyed without an answer.
 */
export interface FakeFailure {
  readonly kind:
    | 'rate_limited'
    | 'secondary_rate_limited'
    | 'too_many_requests'
    | 'unavailable'
    | 'lost'
    | 'dropped';
  readonly method?: string;
  readonly retryAfter?: number;
}

/** One request, as received. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  /** The `Authorization` scheme, lowercased (`token`, `bearer`), or '' without one. */
  readonly scheme: string;
  /** 0 when the connection was dropped instead of answered. */
  readonly status: number;
  /** The query string's parameters. */
  readonly query: Readonly<Record<string, string>>;
  /** The JSON body of a POST, as received. */
  readonly body?: unknown;
}

export interface GitHubFake {
  /** `http://127.0.0.1:<port>`: what `api_base_url` is set to. */
  readonly baseUrl: string;
  /** Token → account; tests add and remove. */
  readonly users: Map<string, FakeUser>;
  /** `owner/name` → repository. */
  readonly repos: Map<string, FakeRepo>;
  app?: FakeApp;
  /** Installation tokens issued, with the installation each is for. */
  readonly installationTokens: Map<string, number>;
  readonly pulls: FakePull[];
  readonly issues: FakeIssue[];
  readonly comments: FakeComment[];
  readonly reviews: FakeReview[];
  /** Head sha → its check runs. */
  readonly checkRuns: Map<string, FakeCheckRun[]>;
  /** Failures the next matching requests meet, in order. */
  readonly failures: FakeFailure[];
  readonly requests: FakeRequest[];
  /**
   * Runs after a pull request is recorded and before the answer is sent: a crash test kills
   * the caller here, so the PR exists and the caller never heard.
   */
  onPullCreated?: (pull: FakePull) => void | Promise<void>;
  /** Empties what tests create (pulls, issues, comments, reviews, checks, failures, requests). */
  reset(): void;
  close(): Promise<void>;
}

/** The head commit the fake reports for a pull request without a seeded `headSha`. */
export function headSha(repo: string, head: string): string {
  return createHash('sha1').update(`${repo}:${head}`).digest('hex');
}

const DOCS = 'https://docs.github.com/rest';

/** GitHub's answer to a call that needed an app JWT and had none that decodes. */
function badJwt(res: ServerResponse): 401 {
  send(res, 401, {
    message: 'A JSON web token could not be decoded',
    documentation_url: DOCS,
    status: '401',
  });
  return 401;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as unknown);
}

function b64urlJson(part: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `jwt` is an RS256 JWT signed by the app's key, issued by it, and not expired. */
function validAppJwt(jwt: string, app: FakeApp): boolean {
  const parts = jwt.split('.');
  if (parts.length !== 3) return false;
  const [h, p, s] = parts as [string, string, string];
  const header = b64urlJson(h);
  const payload = b64urlJson(p);
  if (header?.['alg'] !== 'RS256' || !payload) return false;
  const key = typeof app.publicKey === 'string' ? createPublicKey(app.publicKey) : app.publicKey;
  const ok = verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
  if (!ok) return false;
  const now = Math.floor(Date.now() / 1000);
  const iat = Number(payload['iat']);
  const exp = Number(payload['exp']);
  // GitHub: iss is the app id (or client id), exp at most 10 minutes after iat.
  return (
    String(payload['iss']) === String(app.id) &&
    Number.isFinite(iat) &&
    Number.isFinite(exp) &&
    iat <= now + 60 &&
    exp > now &&
    exp - iat <= 660
  );
}

/**
 * A loopback server speaking the part of GitHub's REST wire format the `mesh.github` package
 * uses: `GET /user`, `GET /app`, `GET /users/{login}`, `GET /repos/{o}/{r}`,
 * `GET /repos/{o}/{r}/pulls` (filtered by `head` and `base`), `POST /repos/{o}/{r}/pulls` (422 for a second open PR from one head, or a head equal to its
 * base), `POST /app/installations/{id}/access_tokens` (the app JWT is verified, RS256, against
 * the app's public key), and under `/repos/{o}/{r}`: `GET|POST /issues` (the list filters by
 * `creator` and `state`, sorted by `created` in `direction`), `GET /issues/{n}` (a pull request
 * too, with `pull_request`), `GET|POST /issues/{n}/comments`, `GET /pulls/{n}`,
 * `GET /pulls/{n}/files`, `GET|POST /pulls/{n}/reviews` (422 for approving one's own) and
 * `GET /commits/{ref}/check-runs`. Lists page as GitHub does (`per_page`, `page`, a `Link` header
 * with `next`/`last`). Credentials are `Authorization: token <t>` or `Bearer <t>`; a missing or
 * unknown one is 401 `{"message":"Bad credentials"}`, an unknown repository or number 404
 * `{"message":"Not Found"}`, as GitHub answers. `failures` makes the next request of a method meet
 * a rate limit (403 with `x-ratelimit-remaining: 0`, 403 with `retry-after`, or 429), a 502, or an
 * answer lost after the write was applied. Every request is recorded, with its query and body.
 */
export async function startGitHubFake(): Promise<GitHubFake> {
  const users = new Map<string, FakeUser>();
  const repos = new Map<string, FakeRepo>();
  const installationTokens = new Map<string, number>();
  const pulls: FakePull[] = [];
  const issues: FakeIssue[] = [];
  const comments: FakeComment[] = [];
  const reviews: FakeReview[] = [];
  const checkRuns = new Map<string, FakeCheckRun[]>();
  const failures: FakeFailure[] = [];
  const requests: FakeRequest[] = [];
  let baseUrl = '';
  const fake: GitHubFake = {
    get baseUrl() {
      return baseUrl;
    },
    users,
    repos,
    installationTokens,
    pulls,
    issues,
    comments,
    reviews,
    checkRuns,
    failures,
    requests,
    reset() {
      for (const list of [pulls, issues, comments, reviews, failures, requests]) list.length = 0;
      checkRuns.clear();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const badCredentials = (res: ServerResponse) =>
    send(res, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
  const notFound = (res: ServerResponse) =>
    send(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });

  type Caller =
    | { kind: 'user'; user: FakeUser }
    | { kind: 'installation'; installation: number }
    | { kind: 'app' };

  const callerOf = (scheme: string, credential: string): Caller | undefined => {
    const user = users.get(credential);
    if (user) return { kind: 'user', user };
    const installation = installationTokens.get(credential);
    if (installation !== undefined) return { kind: 'installation', installation };
    if (scheme === 'bearer' && fake.app && validAppJwt(credential, fake.app))
      return { kind: 'app' };
    return undefined;
  };

  type Answer = [number, unknown, Record<string, string>?];
  const notFoundAnswer = (): Answer => [
    404,
    { message: 'Not Found', documentation_url: DOCS, status: '404' },
  ];
  const invalid = (resource: string, message: string): Answer => [
    422,
    {
      message: 'Validation Failed',
      errors: [{ resource, code: 'custom', message }],
      documentation_url: DOCS,
      status: '422',
    },
  ];

  const takeFailure = (method: string): FakeFailure | undefined => {
    const index = failures.findIndex((f) => (f.method ?? 'POST') === method);
    return index < 0 ? undefined : failures.splice(index, 1)[0];
  };

  const failed = (failure: FakeFailure): Answer => {
    const wait = failure.retryAfter ?? 0;
    switch (failure.kind) {
      case 'rate_limited':
        return [
          403,
          {
            message: 'API rate limit exceeded for user ID 4242.',
            documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
            status: '403',
          },
          {
            'x-ratelimit-limit': '5000',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-used': '5000',
            'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + wait),
          },
        ];
      case 'secondary_rate_limited':
        return [
          403,
          {
            message:
              'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
            documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
            status: '403',
          },
          { 'retry-after': String(wait) },
        ];
      case 'too_many_requests':
        return [
          429,
          { message: 'Too Many Requests', status: '429' },
          { 'retry-after': String(wait) },
        ];
      default:
        return [502, { message: 'Server Error' }];
    }
  };

  /** One page of `items` as GitHub pages a list: `per_page` (30, at most 100), `page`, `Link`. */
  const paged = (items: readonly unknown[], url: URL): Answer => {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30)));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const slice = items.slice((page - 1) * perPage, page * perPage);
    if (last === 1) return [200, slice];
    const at = (n: number) => {
      const u = new URL(`${baseUrl}${url.pathname}${url.search}`);
      u.searchParams.set('per_page', String(perPage));
      u.searchParams.set('page', String(n));
      return u.toString();
    };
    const links: string[] = [];
    if (page > 1) links.push(`<${at(page - 1)}>; rel="prev"`, `<${at(1)}>; rel="first"`);
    if (page < last) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    return [200, slice, { link: links.join(', ') }];
  };

  const nextNumber = (repo: string) =>
    Math.max(
      0,
      ...pulls.filter((p) => p.repo === repo).map((p) => p.number),
      ...issues.filter((i) => i.repo === repo).map((i) => i.number),
    ) + 1;
  let nextId = 1_000_000;
  const userView = (login: string) => ({
    login,
    id: [...users.values()].find((u) => u.login === login)?.id ?? fake.app?.botId ?? 0,
    type: login.endsWith('[bot]') ? 'Bot' : 'User',
  });
  const commentsOf = (repo: string, number: number) =>
    comments.filter((c) => c.repo === repo && c.number === number);
  const issueView = (issue: FakeIssue) => ({
    id: issue.id,
    number: issue.number,
    title: issue.title,
    body: issue.body,
    state: issue.state,
    labels: issue.labels.map((name, i) => ({ id: i + 1, name, color: 'ededed' })),
    user: userView(issue.by),
    comments: commentsOf(issue.repo, issue.number).length,
    html_url: `https://github.com/${issue.repo}/issues/${issue.number}`,
    url: `${baseUrl}/repos/${issue.repo}/issues/${issue.number}`,
    created_at: issue.createdAt,
    updated_at: issue.createdAt,
  });
  const pullView = (pull: FakePull) => {
    const [owner] = pull.repo.split('/');
    const files = pull.files ?? [];
    return {
      id: 2_000_000 + pull.number,
      number: pull.number,
      title: pull.title,
      body: pull.body,
      state: pull.state ?? 'open',
      draft: pull.draft,
      merged: pull.merged ?? false,
      mergeable: pull.mergeable === undefined ? true : pull.mergeable,
      mergeable_state: pull.mergeableState ?? 'clean',
      user: userView(pull.by),
      head: {
        ref: pull.head.includes(':') ? pull.head.split(':')[1] : pull.head,
        label: pull.head.includes(':') ? pull.head : `${owner}:${pull.head}`,
        sha: pull.headSha ?? headSha(pull.repo, pull.head),
      },
      base: { ref: pull.base, label: `${owner}:${pull.base}` },
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      changed_files: files.length,
      commits: 1,
      html_url: `https://github.com/${pull.repo}/pull/${pull.number}`,
    };
  };
  const commentView = (c: FakeComment) => ({
    id: c.id,
    body: c.body,
    user: userView(c.by),
    html_url: `https://github.com/${c.repo}/issues/${c.number}#issuecomment-${c.id}`,
    created_at: c.createdAt,
    updated_at: c.createdAt,
  });
  const reviewView = (r: FakeReview) => ({
    id: r.id,
    body: r.body,
    state: r.state,
    user: userView(r.by),
    commit_id: r.commitId,
    html_url: `https://github.com/${r.repo}/pull/${r.number}#pullrequestreview-${r.id}`,
    submitted_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
  const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

  /** The answer to a request under `/repos/{o}/{r}`, by a caller acting as `login`. */
  const repoAnswer = async (
    method: string,
    path: string,
    url: URL,
    rawBody: unknown,
    login: string,
  ): Promise<Answer> => {
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return notFoundAnswer();
    const fullName = `${decodeURIComponent(m[1] ?? '')}/${decodeURIComponent(m[2] ?? '')}`;
    const repo = repos.get(fullName);
    if (!repo) return notFoundAnswer();
    const [owner, name] = fullName.split('/') as [string, string];
    const rest = m[3] ?? '';
    const body = (typeof rawBody === 'object' && rawBody !== null ? rawBody : {}) as Record<
      string,
      unknown
    >;
    const text = (key: string) => (typeof body[key] === 'string' ? body[key] : '');
    const q = (key: string) => url.searchParams.get(key);
    const numbered = /^\/(issues|pulls)\/(\d+)(\/[a-z-]+)?$/.exec(rest);
    const number = numbered ? Number(numbered[2]) : 0;
    const issue = issues.find((i) => i.repo === fullName && i.number === number);
    const pull = pulls.find((p) => p.repo === fullName && p.number === number);

    if (method === 'GET' && rest === '')
      return [
        200,
        {
          id: 1000 + [...repos.keys()].indexOf(fullName),
          name,
          full_name: fullName,
          owner: { login: owner },
          private: repo.private ?? false,
          default_branch: repo.defaultBranch,
          html_url: `https://github.com/${fullName}`,
          clone_url: `https://github.com/${fullName}.git`,
        },
      ];

    if (method === 'GET' && rest === '/pulls') {
      // Every fake pull is open; `head` is `owner:branch`, as GitHub filters it.
      const head = q('head');
      const base = q('base');
      const listed = pulls
        .filter((p) => p.repo === fullName)
        .filter((p) => head === null || `${owner}:${p.head}` === head || p.head === head)
        .filter((p) => base === null || p.base === base)
        .map((p) => ({
          number: p.number,
          state: 'open',
          title: p.title,
          body: p.body,
          draft: p.draft,
          html_url: `https://github.com/${fullName}/pull/${p.number}`,
          head: { ref: p.head },
          base: { ref: p.base },
        }));
      return paged(listed, url);
    }
    if (method === 'POST' && rest === '/pulls') {
      const title = text('title');
      const head = text('head');
      const base = text('base');
      if (title === '' || head === '' || base === '')
        return invalid('PullRequest', 'title, head and base are required');
      const headRef = head.includes(':') ? head : `${owner}:${head}`;
      if (headRef === `${owner}:${base}`)
        return invalid('PullRequest', `No commits between ${base} and ${head}`);
      if (pulls.some((p) => p.repo === fullName && `${owner}:${p.head}` === headRef))
        return invalid('PullRequest', `A pull request already exists for ${headRef}.`);
      const created: FakePull = {
        repo: fullName,
        number: nextNumber(fullName),
        title,
        head,
        base,
        body: typeof body['body'] === 'string' ? body['body'] : null,
        draft: body['draft'] === true,
        by: login,
      };
      pulls.push(created);
      await fake.onPullCreated?.(created);
      return [
        201,
        {
          number: created.number,
          state: 'open',
          title,
          draft: created.draft,
          html_url: `https://github.com/${fullName}/pull/${created.number}`,
          head: { ref: head },
          base: { ref: base },
        },
      ];
    }

    if (rest === '/issues' && method === 'GET') {
      const state = q('state') ?? 'open';
      const creator = q('creator');
      const direction = q('direction') ?? 'desc';
      if ((q('sort') ?? 'created') !== 'created')
        return invalid('Issue', 'the fake sorts by created only');
      const listed = issues
        .filter((i) => i.repo === fullName)
        .filter((i) => state === 'all' || i.state === state)
        .filter((i) => creator === null || i.by === creator)
        .sort((a, b) => (direction === 'asc' ? a.number - b.number : b.number - a.number))
        .map(issueView);
      return paged(listed, url);
    }
    if (rest === '/issues' && method === 'POST') {
      if (text('title') === '') return invalid('Issue', 'title is required');
      const labels = Array.isArray(body['labels']) ? (body['labels'] as unknown[]) : [];
      const created: FakeIssue = {
        repo: fullName,
        number: nextNumber(fullName),
        id: ++nextId,
        title: text('title'),
        body: typeof body['body'] === 'string' ? body['body'] : null,
        state: 'open',
        labels: labels.filter((l): l is string => typeof l === 'string'),
        by: login,
        createdAt: now(),
      };
      issues.push(created);
      return [201, issueView(created)];
    }

    if (!numbered) return notFoundAnswer();
    const kind = numbered[1];
    const sub = numbered[3] ?? '';

    if (kind === 'issues' && sub === '' && method === 'GET') {
      if (issue) return [200, issueView(issue)];
      if (!pull) return notFoundAnswer();
      const view = pullView(pull);
      return [
        200,
        {
          id: view.id,
          number: view.number,
          title: view.title,
          body: view.body,
          state: view.state,
          labels: [],
          user: view.user,
          comments: commentsOf(fullName, number).length,
          html_url: view.html_url,
          pull_request: {
            url: `${baseUrl}/repos/${fullName}/pulls/${number}`,
            html_url: view.html_url,
          },
        },
      ];
    }
    if (kind === 'issues' && sub === '/comments') {
      if (!issue && !pull) return notFoundAnswer();
      if (method === 'GET') {
        const since = q('since');
        return paged(
          commentsOf(fullName, number)
            .filter((c) => since === null || c.createdAt >= since)
            .map(commentView),
          url,
        );
      }
      if (method === 'POST') {
        if (text('body') === '') return invalid('IssueComment', 'body is required');
        const created: FakeComment = {
          repo: fullName,
          number,
          id: ++nextId,
          body: text('body'),
          by: login,
          createdAt: now(),
        };
        comments.push(created);
        return [201, commentView(created)];
      }
    }

    if (kind !== 'pulls' || !pull) return notFoundAnswer();
    if (sub === '' && method === 'GET') return [200, pullView(pull)];
    if (sub === '/files' && method === 'GET')
      return paged(
        (pull.files ?? []).map((f, i) => ({
          sha: createHash('sha1').update(`${f.filename}:${i}`).digest('hex'),
          changes: f.additions + f.deletions,
          blob_url: `https://github.com/${fullName}/blob/${pullView(pull).head.sha}/${f.filename}`,
          ...f,
        })),
        url,
      );
    const reviewsOf = () => reviews.filter((r) => r.repo === fullName && r.number === number);
    if (sub === '/reviews' && method === 'GET') return paged(reviewsOf().map(reviewView), url);
    if (sub === '/reviews' && method === 'POST') {
      const event = text('event');
      const states = {
        APPROVE: 'APPROVED',
        REQUEST_CHANGES: 'CHANGES_REQUESTED',
        COMMENT: 'COMMENTED',
      } as const;
      if (!(event in states))
        return invalid('PullRequestReview', 'event must be APPROVE, REQUEST_CHANGES or COMMENT');
      if (event !== 'APPROVE' && text('body') === '')
        return invalid('PullRequestReview', `Review body is required for ${event}`);
      if (event === 'APPROVE' && pull.by === login)
        return invalid('PullRequestReview', 'Can not approve your own pull request');
      if (event === 'REQUEST_CHANGES' && pull.by === login)
        return invalid('PullRequestReview', 'Can not request changes on your own pull request');
      const created: FakeReview = {
        repo: fullName,
        number,
        id: ++nextId,
        state: states[event as keyof typeof states],
        body: text('body'),
        by: login,
        commitId: pullView(pull).head.sha,
      };
      reviews.push(created);
      // GitHub answers a created review with 200, not 201.
      return [200, reviewView(created)];
    }
    return notFoundAnswer();
  };

  /** `GET /repos/{o}/{r}/commits/{ref}/check-runs`, answered before the numbered routes. */
  const checkRunsAnswer = (path: string, url: URL): Answer | undefined => {
    const m = /^\/repos\/([^/]+)\/([^/]+)\/commits\/([^/]+)\/check-runs$/.exec(path);
    if (!m) return undefined;
    const fullName = `${decodeURIComponent(m[1] ?? '')}/${decodeURIComponent(m[2] ?? '')}`;
    if (!repos.has(fullName)) return notFoundAnswer();
    const sha = decodeURIComponent(m[3] ?? '');
    const runs = (checkRuns.get(sha) ?? []).map((run, i) => ({
      id: 3_000_000 + i,
      name: run.name,
      head_sha: sha,
      status: run.status,
      conclusion: run.conclusion,
      html_url: `https://github.com/${fullName}/runs/${3_000_000 + i}`,
      details_url: `https://ci.example.test/${fullName}/${i}`,
    }));
    const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
    return [200, { total_count: runs.length, check_runs: runs.slice(0, perPage) }];
  };

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<number> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const auth = /^(token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const scheme = auth?.[1]?.toLowerCase() ?? '';
    const caller = auth ? callerOf(scheme, auth[2] ?? '') : undefined;
    const botLogin = fake.app ? `${fake.app.slug}[bot]` : '';

    const userMatch = /^\/users\/([^/]+)$/.exec(path);
    if (method === 'GET' && userMatch) {
      const login = decodeURIComponent(userMatch[1] ?? '');
      if (fake.app && login === botLogin) {
        send(res, 200, { login, id: fake.app.botId, type: 'Bot', name: null, email: null });
        return 200;
      }
      const found = [...users.values()].find((u) => u.login === login);
      if (!found) return (notFound(res), 404);
      send(res, 200, { login: found.login, id: found.id, type: 'User', name: found.name });
      return 200;
    }

    if (!caller) return (badCredentials(res), 401);

    if (method === 'GET' && path === '/user') {
      if (caller.kind !== 'user') {
        send(res, 403, { message: 'Resource not accessible by integration', status: '403' });
        return 403;
      }
      const { login, id, name, email } = caller.user;
      send(res, 200, { login, id, name, email, type: 'User' });
      return 200;
    }

    if (method === 'GET' && path === '/app') {
      if (caller.kind !== 'app' || !fake.app) {
        return badJwt(res);
      }
      send(res, 200, { id: fake.app.id, slug: fake.app.slug, name: fake.app.slug });
      return 200;
    }

    const tokenMatch = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (method === 'POST' && tokenMatch) {
      if (caller.kind !== 'app' || !fake.app) {
        return badJwt(res);
      }
      const installation = Number(tokenMatch[1]);
      if (!fake.app.installations.includes(installation)) return (notFound(res), 404);
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      installationTokens.set(token, installation);
      send(res, 201, {
        token,
        expires_at: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        permissions: { contents: 'write', pull_requests: 'write' },
        repository_selection: 'all',
      });
      return 201;
    }

    if (path.startsWith('/repos/') && caller.kind !== 'app') {
      const failure = takeFailure(method);
      if (failure && failure.kind !== 'lost' && failure.kind !== 'dropped') {
        const [status, payload, headers] = failed(failure);
        send(res, status, payload, headers);
        return status;
      }
      const login = caller.kind === 'user' ? caller.user.login : botLogin;
      const [status, payload, headers] =
        (method === 'GET' ? checkRunsAnswer(path, url) : undefined) ??
        (await repoAnswer(method, path, url, body, login));
      if (failure?.kind === 'dropped') {
        res.socket?.destroy();
        return 0;
      }
      if (failure?.kind === 'lost') {
        send(res, 502, { message: 'Server Error' });
        return 502;
      }
      send(res, status, payload, headers);
      return status;
    }
    return (notFound(res), 404);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const auth = /^(token|bearer)\s/i.exec(req.headers.authorization ?? '');
    const record = (status: number, body: unknown) =>
      requests.push({
        method: req.method ?? 'GET',
        path: decodeURIComponent(url.pathname),
        scheme: auth?.[1]?.toLowerCase() ?? '',
        status,
        query: Object.fromEntries(url.searchParams),
        ...(req.method === 'POST' ? { body } : {}),
      });
    bodyOf(req)
      .then(async (body) => record(await handle(req, res, body), body))
      .catch((error: unknown) => send(res, 500, { message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
