import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  destroySandbox,
  envdHandler,
  FAKE_ENVD_VERSION,
  prepareSandbox,
  type EnvdSandbox,
} from './e2b-fake-envd.ts';

/**
 * A loopback fake of E2B: the control API (`apiUrl`: create, get, list, kill, set timeout —
 * `X-API-Key` checked, 401 on a wrong key) and every sandbox's envd (`sandboxUrl`: commands and
 * files, see e2b-fake-envd.ts), each on its own random 127.0.0.1 port. The SDK is pointed at it
 * with `apiUrl` and `sandboxUrl`; the SDK sends `E2b-Sandbox-Id` on every envd request, which is
 * how one port serves every sandbox. docs/e2b-fake.md says what it implements and what not.
 */
export interface FakeE2b {
  /** The control API: the SDK's `apiUrl`. */
  readonly apiUrl: string;
  /** Every sandbox's envd: the SDK's `sandboxUrl`. */
  readonly sandboxUrl: string;
  /** The API key the fake accepts. */
  readonly apiKey: string;
  /** The body of every `POST /v2/sandboxes`, in order (accepted or not). */
  readonly createRequests: Record<string, unknown>[];
  /** Every `POST /sandboxes/{id}/timeout`: the sandbox and the timeout in seconds. */
  readonly timeoutRequests: { sandboxId: string; timeout: number }[];
  /** Ids of the sandboxes still running. */
  running(): string[];
  /** The host directory standing for a running sandbox's `/`. */
  sandboxDir(sandboxId: string): string | undefined;
  /** Kills every sandbox and stops listening. */
  close(): Promise<void>;
}

interface FakeSandbox extends EnvdSandbox {
  readonly templateId: string;
  readonly metadata: Record<string, string>;
  readonly startedAt: Date;
  endAt: Date;
  timer: NodeJS.Timeout;
}

/** E2B's default sandbox timeout when the create request names none: 300 s. */
const DEFAULT_TIMEOUT_S = 300;

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function json(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) return void res.writeHead(status).end();
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function listen(server: HttpServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Starts the fake; `apiKey` is the one key it accepts (a fresh random one by default). */
export async function startFakeE2b(options: { apiKey?: string } = {}): Promise<FakeE2b> {
  const apiKey = options.apiKey ?? `e2b_${randomBytes(20).toString('hex')}`;
  const sandboxes = new Map<string, FakeSandbox>();
  const createRequests: Record<string, unknown>[] = [];
  const timeoutRequests: { sandboxId: string; timeout: number }[] = [];

  const kill = async (id: string) => {
    const sandbox = sandboxes.get(id);
    if (!sandbox) return false;
    sandboxes.delete(id);
    clearTimeout(sandbox.timer);
    await destroySandbox(sandbox);
    return true;
  };
  const schedule = (sandbox: FakeSandbox, seconds: number) => {
    clearTimeout(sandbox.timer);
    sandbox.endAt = new Date(Date.now() + seconds * 1000);
    sandbox.timer = setTimeout(() => void kill(sandbox.id), seconds * 1000).unref();
  };
  const info = (s: FakeSandbox) => ({
    templateID: s.templateId,
    sandboxID: s.id,
    clientID: 'fake',
    startedAt: s.startedAt.toISOString(),
    endAt: s.endAt.toISOString(),
    envdVersion: FAKE_ENVD_VERSION,
    metadata: s.metadata,
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    state: 'running',
  });

  async function control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers['x-api-key'] !== apiKey) {
      // Like E2B: the key is not repeated.
      return json(res, 401, {
        code: 401,
        message: 'Invalid API key, please check your credentials',
      });
    }
    const url = new URL(req.url ?? '/', 'http://api');
    const [, first, id, action] = url.pathname.split('/');
    if (req.method === 'POST' && url.pathname === '/v2/sandboxes') {
      const body = await readJson(req);
      createRequests.push(body);
      const sandboxId = `fake${randomBytes(8).toString('hex')}`;
      const sandbox: FakeSandbox = {
        id: sandboxId,
        accessToken: randomUUID(),
        dir: await mkdtemp(join(tmpdir(), 'mesh-e2b-fake-')),
        envs: (body.envVars as Record<string, string> | undefined) ?? {},
        processes: new Map(),
        templateId: typeof body.templateID === 'string' ? body.templateID : 'base',
        metadata: (body.metadata as Record<string, string> | undefined) ?? {},
        startedAt: new Date(),
        endAt: new Date(),
        timer: setTimeout(() => undefined, 0),
      };
      await prepareSandbox(sandbox);
      sandboxes.set(sandboxId, sandbox);
      schedule(sandbox, typeof body.timeout === 'number' ? body.timeout : DEFAULT_TIMEOUT_S);
      return json(res, 201, {
        templateID: sandbox.templateId,
        sandboxID: sandboxId,
        clientID: 'fake',
        envdVersion: FAKE_ENVD_VERSION,
        envdAccessToken: sandbox.accessToken,
        trafficAccessToken: null,
        domain: null,
      });
    }
    if (req.method === 'GET' && url.pathname === '/v2/sandboxes')
      return json(res, 200, [...sandboxes.values()].map(info));
    if (first === 'sandboxes' && id) {
      const sandbox = sandboxes.get(id);
      if (!sandbox) return json(res, 404, { code: 404, message: `sandbox ${id} not found` });
      if (req.method === 'GET' && action === undefined) return json(res, 200, info(sandbox));
      if (req.method === 'DELETE' && action === undefined) {
        await kill(id);
        return json(res, 204);
      }
      if (req.method === 'POST' && action === 'timeout') {
        const body = await readJson(req);
        const timeout = Number(body.timeout);
        if (!Number.isFinite(timeout) || timeout < 0)
          return json(res, 400, { code: 400, message: 'timeout must be a number of seconds' });
        timeoutRequests.push({ sandboxId: id, timeout });
        schedule(sandbox, timeout);
        return json(res, 204);
      }
    }
    return json(res, 404, { code: 404, message: `no route ${req.method} ${url.pathname}` });
  }

  const api = createServer((req, res) => {
    control(req, res).catch((error: unknown) =>
      json(res, 500, { code: 500, message: String(error) }),
    );
  });
  const envd = createServer(envdHandler(sandboxes));
  const [apiUrl, sandboxUrl] = await Promise.all([listen(api), listen(envd)]);

  return {
    apiUrl,
    sandboxUrl,
    apiKey,
    createRequests,
    timeoutRequests,
    running: () => [...sandboxes.keys()],
    sandboxDir: (sandboxId) => sandboxes.get(sandboxId)?.dir,
    async close() {
      await Promise.all([...sandboxes.keys()].map(kill));
      for (const server of [api, envd]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
