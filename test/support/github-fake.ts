import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
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

/** One pull request as created. */
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
}

/** One request, as received. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  /** The `Authorization` scheme, lowercased (`token`, `bearer`), or '' without one. */
  readonly scheme: string;
  readonly status: number;
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
  readonly requests: FakeRequest[];
  /**
   * Runs after a pull request is recorded and before the answer is sent: a crash test kills
   * the caller here, so the PR exists and the caller never heard.
   */
  onPullCreated?: (pull: FakePull) => void | Promise<void>;
  close(): Promise<void>;
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

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
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
 * `POST /repos/{o}/{r}/pulls` (422 for a second open PR from one head, or a head equal to its
 * base) and `POST /app/installations/{id}/access_tokens` (the app JWT is verified, RS256, against
 * the app's public key). Credentials are `Authorization: token <t>` or `Bearer <t>`; a missing or
 * unknown one is 401 `{"message":"Bad credentials"}`, as GitHub answers.
 */
export async function startGitHubFake(): Promise<GitHubFake> {
  const users = new Map<string, FakeUser>();
  const repos = new Map<string, FakeRepo>();
  const installationTokens = new Map<string, number>();
  const pulls: FakePull[] = [];
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
    requests,
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

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<number> => {
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
      await bodyOf(req);
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

    const repoMatch = /^\/repos\/([^/]+)\/([^/]+)(\/pulls)?$/.exec(path);
    if (repoMatch && caller.kind !== 'app') {
      const fullName = `${decodeURIComponent(repoMatch[1] ?? '')}/${decodeURIComponent(repoMatch[2] ?? '')}`;
      const repo = repos.get(fullName);
      if (!repo) return (notFound(res), 404);
      const [owner, name] = fullName.split('/') as [string, string];
      if (method === 'GET' && !repoMatch[3]) {
        send(res, 200, {
          id: 1000 + [...repos.keys()].indexOf(fullName),
          name,
          full_name: fullName,
          owner: { login: owner },
          private: repo.private ?? false,
          default_branch: repo.defaultBranch,
          html_url: `https://github.com/${fullName}`,
          clone_url: `https://github.com/${fullName}.git`,
        });
        return 200;
      }
      if (method === 'POST' && repoMatch[3]) {
        const body = (await bodyOf(req)) as Record<string, unknown>;
        const title = typeof body['title'] === 'string' ? body['title'] : '';
        const head = typeof body['head'] === 'string' ? body['head'] : '';
        const base = typeof body['base'] === 'string' ? body['base'] : '';
        const invalid = (message: string) => {
          send(res, 422, {
            message: 'Validation Failed',
            errors: [{ resource: 'PullRequest', code: 'custom', message }],
            documentation_url: DOCS,
            status: '422',
          });
          return 422;
        };
        if (title === '' || head === '' || base === '')
          return invalid('title, head and base are required');
        const headRef = head.includes(':') ? head : `${owner}:${head}`;
        if (headRef === `${owner}:${base}`)
          return invalid(`No commits between ${base} and ${head}`);
        if (pulls.some((p) => p.repo === fullName && `${owner}:${p.head}` === headRef))
          return invalid(`A pull request already exists for ${headRef}.`);
        const number = pulls.filter((p) => p.repo === fullName).length + 1;
        pulls.push({
          repo: fullName,
          number,
          title,
          head,
          base,
          body: typeof body['body'] === 'string' ? body['body'] : null,
          draft: body['draft'] === true,
          by: caller.kind === 'user' ? caller.user.login : botLogin,
        });
        await fake.onPullCreated?.(pulls[pulls.length - 1]!);
        send(res, 201, {
          number,
          state: 'open',
          title,
          draft: body['draft'] === true,
          html_url: `https://github.com/${fullName}/pull/${number}`,
          head: { ref: head },
          base: { ref: base },
        });
        return 201;
      }
    }
    return (notFound(res), 404);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const auth = /^(token|bearer)\s/i.exec(req.headers.authorization ?? '');
    handle(req, res).then(
      (status) =>
        requests.push({
          method: req.method ?? 'GET',
          path: decodeURIComponent(url.pathname),
          scheme: auth?.[1]?.toLowerCase() ?? '',
          status,
        }),
      (error: unknown) => send(res, 500, { message: String(error) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
