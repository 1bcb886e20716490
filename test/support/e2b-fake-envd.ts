import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { Readable } from 'node:stream';
import type { DescFile, DescService } from '@bufbuild/protobuf';
import { fileDesc } from '@bufbuild/protobuf/codegenv2';
import { file_google_protobuf_timestamp, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';

/**
 * The in-sandbox daemon (envd) of the E2B fake: the Connect services `process.Process` and
 * `filesystem.Filesystem`, and the HTTP endpoints `/files` and `/health`, as the E2B SDK calls
 * them. The service descriptors are the SDK's own: its bundle embeds the generated protobuf
 * files (`fileDesc("…")`), which are read out of node_modules/e2b and decoded here, so the fake
 * speaks exactly the wire the installed SDK speaks. Commands run for real, by spawn, in a
 * per-sandbox temp directory that stands for the sandbox's `/`.
 */

/** The envd version the fake claims: new enough that the SDK sends no default user. */
export const FAKE_ENVD_VERSION = '0.6.4';
/** The home directory of the sandbox's default user, as in E2B's base template. */
const HOME = '/home/user';

/** One fake sandbox's daemon: its files (under `dir`) and its running processes. */
export interface EnvdSandbox {
  readonly id: string;
  readonly accessToken: string;
  /** The host directory that stands for the sandbox's `/`. */
  readonly dir: string;
  /** Environment variables given at creation (`envVars`), seen by every process. */
  readonly envs: Readonly<Record<string, string>>;
  readonly processes: Map<number, ChildProcess>;
}

/** Where a sandbox path (absolute, or relative to the home directory) lies on the host. */
export function hostPath(sandbox: EnvdSandbox, path: string): string {
  const absolute = posix.resolve(HOME, path);
  return join(sandbox.dir, posix.normalize(absolute));
}

/** Kills every process of the sandbox (their process groups) and removes its files. */
export async function destroySandbox(sandbox: EnvdSandbox): Promise<void> {
  for (const child of sandbox.processes.values()) killGroup(child, 'SIGKILL');
  sandbox.processes.clear();
  await rm(sandbox.dir, { recursive: true, force: true });
}

/** Makes the sandbox's home directory, as a template would have it. */
export async function prepareSandbox(sandbox: EnvdSandbox): Promise<void> {
  await mkdir(hostPath(sandbox, HOME), { recursive: true });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

let services: { process: DescService; filesystem: DescService } | undefined;

/** The SDK's envd services, decoded from the descriptors embedded in its bundle. */
function envdServices(): { process: DescService; filesystem: DescService } {
  if (services) return services;
  const bundle = readFileSync(createRequire(import.meta.url).resolve('e2b'), 'utf8');
  const files: DescFile[] = [...bundle.matchAll(/fileDesc\)?\("([A-Za-z0-9+/=]+)"/g)].map((m) =>
    fileDesc(m[1]!, [file_google_protobuf_timestamp]),
  );
  const find = (typeName: string) => {
    const found = files.flatMap((f) => f.services).find((s) => s.typeName === typeName);
    if (!found)
      throw new Error(`the e2b bundle has no ${typeName} descriptor: the fake needs updating`);
    return found;
  };
  services = { process: find('process.Process'), filesystem: find('filesystem.Filesystem') };
  return services;
}

/** A push-pull queue: what a running process emits, read by the streaming handler. */
class EventQueue<T> {
  private readonly items: T[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  push(item: T): void {
    this.items.push(item);
    this.waiting?.();
  }
  end(): void {
    this.ended = true;
    this.waiting?.();
  }
  async *drain(signal: AbortSignal): AsyncGenerator<T> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended || signal.aborted) return;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.waiting = undefined;
    }
  }
}

interface StartRequest {
  process?: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string };
}
interface SelectorRequest {
  process?: {
    selector: { case: 'pid'; value: number } | { case: 'tag'; value: string } | { case: undefined };
  };
  signal?: number;
}
interface PathRequest {
  path: string;
}

type Lookup = (ctx: HandlerContext) => EnvdSandbox;

async function entryInfo(sandbox: EnvdSandbox, path: string) {
  const absolute = posix.resolve(HOME, path);
  const st = await stat(hostPath(sandbox, absolute)).catch(() => undefined);
  if (!st) throw new ConnectError(`path '${absolute}' does not exist`, Code.NotFound);
  return {
    name: posix.basename(absolute),
    type: st.isDirectory() ? 2 : 1,
    path: absolute,
    size: BigInt(st.size),
    mode: st.mode & 0o777,
    permissions: (st.mode & 0o777).toString(8),
    owner: 'user',
    group: 'user',
    modifiedTime: timestampFromDate(st.mtime),
  };
}

function routes(lookup: Lookup) {
  return (router: ConnectRouter) => {
    const { process: processService, filesystem } = envdServices();
    router.service(processService, {
      async *start(request: StartRequest, ctx: HandlerContext) {
        const sandbox = lookup(ctx);
        const config = request.process;
        if (!config) throw new ConnectError('process config is required', Code.InvalidArgument);
        const cwd = hostPath(sandbox, config.cwd ?? HOME);
        if (!(await stat(cwd).catch(() => undefined))?.isDirectory())
          throw new ConnectError(`cwd '${config.cwd}' does not exist`, Code.InvalidArgument);
        const child = spawn(config.cmd, config.args, {
          cwd,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: hostPath(sandbox, HOME),
            ...sandbox.envs,
            ...config.envs,
          },
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const queue = new EventQueue<{ case: 'data' | 'end'; value: object }>();
        const pid = child.pid;
        if (pid === undefined) {
          await new Promise((resolve) => child.once('error', resolve));
          throw new ConnectError(`cannot start ${config.cmd}`, Code.Internal);
        }
        sandbox.processes.set(pid, child);
        child.stdout.on('data', (chunk: Buffer) =>
          queue.push({
            case: 'data',
            value: { output: { case: 'stdout', value: new Uint8Array(chunk) } },
          }),
        );
        child.stderr.on('data', (chunk: Buffer) =>
          queue.push({
            case: 'data',
            value: { output: { case: 'stderr', value: new Uint8Array(chunk) } },
          }),
        );
        child.once('close', (code, signal) => {
          sandbox.processes.delete(pid);
          queue.push({
            case: 'end',
            value:
              code === null
                ? {
                    exitCode: -1,
                    exited: false,
                    status: `signal: ${signal}`,
                    error: `signal: ${signal}`,
                  }
                : { exitCode: code, exited: true, status: `exit status ${code}` },
          });
          queue.end();
        });
        yield { event: { event: { case: 'start', value: { pid } } } };
        for await (const event of queue.drain(ctx.signal)) yield { event: { event } };
      },
      sendSignal(request: SelectorRequest, ctx: HandlerContext) {
        const sandbox = lookup(ctx);
        const selector = request.process?.selector;
        const child = selector?.case === 'pid' ? sandbox.processes.get(selector.value) : undefined;
        if (!child) throw new ConnectError('process not found', Code.NotFound);
        killGroup(child, request.signal === 15 ? 'SIGTERM' : 'SIGKILL');
        return {};
      },
      list(_request: object, ctx: HandlerContext) {
        const sandbox = lookup(ctx);
        return {
          processes: [...sandbox.processes].map(([pid, child]) => ({
            pid,
            config: { cmd: child.spawnfile, args: child.spawnargs.slice(1), envs: {} },
          })),
        };
      },
    } as never);
    router.service(filesystem, {
      async stat(request: PathRequest, ctx: HandlerContext) {
        return { entry: await entryInfo(lookup(ctx), request.path) };
      },
      async makeDir(request: PathRequest, ctx: HandlerContext) {
        const sandbox = lookup(ctx);
        const target = hostPath(sandbox, request.path);
        if (await stat(target).catch(() => undefined))
          throw new ConnectError(`'${request.path}' already exists`, Code.AlreadyExists);
        await mkdir(target, { recursive: true });
        return { entry: await entryInfo(sandbox, request.path) };
      },
      async remove(request: PathRequest, ctx: HandlerContext) {
        await rm(hostPath(lookup(ctx), request.path), { recursive: true, force: true });
        return {};
      },
    } as never);
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** `GET /files?path=`: the file's bytes; `POST /files?path=`: multipart or octet-stream upload. */
async function files(sandbox: EnvdSandbox, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://envd');
  const path = url.searchParams.get('path') ?? '';
  if (req.method === 'GET') {
    const target = hostPath(sandbox, path);
    const st = await stat(target).catch(() => undefined);
    if (!st) return json(res, 404, { code: 404, message: `path '${path}' does not exist` });
    if (!st.isFile()) return json(res, 400, { code: 400, message: `path '${path}' is not a file` });
    const bytes = await readFile(target);
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(bytes.length),
    });
    return res.end(bytes);
  }
  if (req.method !== 'POST') return json(res, 405, { code: 405, message: 'method not allowed' });
  const uploads: { path: string; bytes: Uint8Array }[] = [];
  const body = Readable.toWeb(req);
  const request = new Request(url, {
    method: 'POST',
    headers: req.headers as Record<string, string>,
    body,
    duplex: 'half',
  });
  if ((req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
    for (const [field, value] of await request.formData()) {
      if (field !== 'file' || typeof value === 'string') continue;
      uploads.push({ path: path || value.name, bytes: new Uint8Array(await value.arrayBuffer()) });
    }
  } else {
    uploads.push({ path, bytes: new Uint8Array(await request.arrayBuffer()) });
  }
  const written = [];
  for (const upload of uploads) {
    const target = hostPath(sandbox, upload.path);
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, upload.bytes);
    } catch (error) {
      // envd answers a path it cannot write (a folder, a file as parent) with 400.
      return json(res, 400, {
        code: 400,
        message: `cannot write '${upload.path}': ${String(error)}`,
      });
    }
    const absolute = posix.resolve(HOME, upload.path);
    written.push({ name: posix.basename(absolute), type: 'file', path: absolute });
  }
  return json(res, 200, written);
}

/**
 * The envd request handler of every fake sandbox: the E2B proxy's routing (`E2b-Sandbox-Id`)
 * and envd's access token (`X-Access-Token`) are checked first; an unknown or killed sandbox is
 * answered 502, as E2B's proxy answers it.
 */
export function envdHandler(
  sandboxes: ReadonlyMap<string, EnvdSandbox>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const sandboxOf = (id: string | null | undefined, token: string | null | undefined) => {
    const sandbox = id ? sandboxes.get(id) : undefined;
    return sandbox && sandbox.accessToken === token ? sandbox : undefined;
  };
  const lookup: Lookup = (ctx) => {
    const sandbox = sandboxOf(
      ctx.requestHeader.get('e2b-sandbox-id'),
      ctx.requestHeader.get('x-access-token'),
    );
    if (!sandbox) throw new ConnectError('sandbox not found', Code.Unavailable);
    return sandbox;
  };
  const rpc = connectNodeAdapter({
    routes: routes(lookup),
    fallback: (request, response) => {
      const req = request as IncomingMessage;
      const res = response as ServerResponse;
      const sandbox = sandboxOf(
        req.headers['e2b-sandbox-id'] as string | undefined,
        req.headers['x-access-token'] as string | undefined,
      )!;
      const path = new URL(req.url ?? '/', 'http://envd').pathname;
      if (path === '/health') return void res.writeHead(204).end();
      if (path === '/files')
        return void files(sandbox, req, res).catch((error: unknown) =>
          json(res, 500, { code: 500, message: String(error) }),
        );
      json(res, 404, { code: 404, message: `no route ${path}` });
    },
  });
  return (req, res) => {
    const sandbox = sandboxOf(
      req.headers['e2b-sandbox-id'] as string | undefined,
      req.headers['x-access-token'] as string | undefined,
    );
    if (!sandbox) return json(res, 502, { code: 502, message: 'The sandbox was not found' });
    rpc(req, res);
  };
}
