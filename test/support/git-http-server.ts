import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** An environment for git that reads no user or system config and never prompts. */
export function isolatedGitEnv(
  home: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  };
}

/** One commit's author and committer, as `git log` reports them. */
export interface CommitIdentity {
  readonly authorName: string;
  readonly authorEmail: string;
  readonly committerName: string;
  readonly committerEmail: string;
  readonly subject: string;
}

/** One request the server answered. */
export interface GitRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The Basic user name presented, when credentials were. */
  readonly user?: string;
}

/**
 * A loopback git server over smart HTTP: bare repositories under a temporary folder, served by
 * git's own `git http-backend` CGI, behind HTTP Basic authentication whose password must be the
 * token (the user name is ignored, as GitHub ignores it for tokens). Without credentials it
 * answers 401 with `WWW-Authenticate`, so git asks its credential helper and retries.
 */
export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`: a repository is at `${baseUrl}/<owner>/<name>.git`. */
  readonly baseUrl: string;
  /** The folder holding `<owner>/<name>.git`. */
  readonly root: string;
  /** The password every request must present; tests may change it. */
  token: string;
  readonly requests: GitRequest[];
  /** Creates `<owner>/<name>.git` with one commit (a README) on `branch` (default `main`). */
  createRepo(fullName: string, options?: { branch?: string }): Promise<void>;
  /** The head commit of `branch` in the bare repository, or undefined when it does not exist. */
  headOf(fullName: string, branch: string): Promise<CommitIdentity | undefined>;
  /** A file's content at the head of `branch`, or undefined when either does not exist. */
  fileAt(fullName: string, branch: string, path: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const SEED_IDENTITY = {
  GIT_AUTHOR_NAME: 'Seed',
  GIT_AUTHOR_EMAIL: 'seed@example.test',
  GIT_COMMITTER_NAME: 'Seed',
  GIT_COMMITTER_EMAIL: 'seed@example.test',
};

function unauthorized(res: ServerResponse): void {
  res.writeHead(401, {
    'www-authenticate': 'Basic realm="git fake"',
    'content-type': 'text/plain',
  });
  res.end('authentication required\n');
}

function basicCredentials(req: IncomingMessage): { user: string; password: string } | undefined {
  const header = req.headers.authorization ?? '';
  const match = /^Basic\s+(\S+)$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  if (at < 0) return undefined;
  return { user: decoded.slice(0, at), password: decoded.slice(at + 1) };
}

/** Runs `git http-backend` for one request and relays its CGI answer. */
function backend(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  root: string,
  user: string,
  done: (status: number) => void,
): void {
  const child = spawn('git', ['http-backend'], {
    env: {
      ...isolatedGitEnv(root),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      // Pushes are enabled per request (http-backend reads this as git config).
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      PATH_INFO: decodeURIComponent(url.pathname),
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: url.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: user,
      REMOTE_ADDR: '127.0.0.1',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headerDone = false;
  let status = 200;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headerDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    headerDone = true;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'status') status = Number.parseInt(value, 10) || 200;
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.on('close', (code) => {
    if (!headerDone) {
      status = 500;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write(`git http-backend exited ${code}: ${stderr}`);
    }
    res.end();
    done(status);
  });
}

/** Starts a git smart-HTTP server on 127.0.0.1 that accepts `token` as the Basic password. */
export async function startGitHttpServer(token: string): Promise<GitHttpServer> {
  const root = await mkdtemp(join(tmpdir(), 'mesh-git-server-'));
  const requests: GitRequest[] = [];
  const state = { token };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const credentials = basicCredentials(req);
    const record = (status: number) =>
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        status,
        ...(credentials ? { user: credentials.user } : {}),
      });
    if (!credentials || credentials.password !== state.token) {
      req.resume();
      unauthorized(res);
      record(401);
      return;
    }
    backend(req, res, url, root, credentials.user, record);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const gitDir = (fullName: string) => join(root, `${fullName}.git`);
  const git = (args: string[], cwd?: string) =>
    run('git', args, { cwd, env: isolatedGitEnv(root, SEED_IDENTITY) });

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    root,
    get token() {
      return state.token;
    },
    set token(value: string) {
      state.token = value;
    },
    requests,
    async createRepo(fullName, options = {}) {
      const branch = options.branch ?? 'main';
      const bare = gitDir(fullName);
      await mkdir(bare, { recursive: true });
      await git(['init', '--bare', '--quiet', `--initial-branch=${branch}`, bare]);
      const work = await mkdtemp(join(tmpdir(), 'mesh-git-seed-'));
      try {
        await git(['init', '--quiet', `--initial-branch=${branch}`, work]);
        await writeFile(join(work, 'README.md'), `# ${fullName}\n`);
        await git(['-C', work, 'add', 'README.md']);
        await git(['-C', work, 'commit', '--quiet', '-m', 'initial commit']);
        await git(['-C', work, 'push', '--quiet', bare, `HEAD:refs/heads/${branch}`]);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    async headOf(fullName, branch) {
      try {
        const { stdout } = await git([
          '--git-dir',
          gitDir(fullName),
          'log',
          '-1',
          '--format=%an%x00%ae%x00%cn%x00%ce%x00%s',
          `refs/heads/${branch}`,
          '--',
        ]);
        const [authorName, authorEmail, committerName, committerEmail, subject] = stdout
          .replace(/\n$/, '')
          .split('\0');
        return {
          authorName: authorName ?? '',
          authorEmail: authorEmail ?? '',
          committerName: committerName ?? '',
          committerEmail: committerEmail ?? '',
          subject: subject ?? '',
        };
      } catch {
        return undefined;
      }
    },
    async fileAt(fullName, branch, path) {
      try {
        const { stdout } = await git([
          '--git-dir',
          gitDir(fullName),
          'show',
          `refs/heads/${branch}:${path}`,
        ]);
        return stdout;
      } catch {
        return undefined;
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
