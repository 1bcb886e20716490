import { performance } from 'node:perf_hooks';
import { ALL_TRAFFIC, FileType, Sandbox, type CommandHandle, type ConnectionOpts } from 'e2b';
import {
  BackendUnavailableError,
  type BackendCapabilities,
  type EgressRule,
  type ExecRequest,
  type ExecResult,
  type ProvisionSpec,
  type Workspace,
  type WorkspaceBackend,
  WorkspaceFileError,
} from '../backend.ts';
import { hasCode } from '../../tool/errors.ts';
import { resolveWorkspacePath } from '../workspace-path.ts';

/**
 * The E2B backend: each workspace is an E2B sandbox (a Firecracker microVM), driven through the
 * official SDK. Commands run by envd inside the sandbox, files move over its HTTP file API, and
 * egress is E2B's own outbound filter. See docs/e2b-fake.md for how it is tested on loopback.
 */
export interface E2bBackendOptions {
  readonly apiKey: string;
  /** The control API; default `https://api.<domain>`. */
  readonly apiUrl?: string;
  /** E2B's domain (`e2b.app`, or a self-hosted cluster's); default `e2b.app`. */
  readonly domain?: string;
  /**
   * One envd URL for every sandbox (a proxy, a loopback fake), routed by the `E2b-Sandbox-Id`
   * header the SDK sends; default each sandbox's own host under the domain.
   */
  readonly sandboxUrl?: string;
  /** The template sandboxes start from when the spec names no image; default `base`. */
  readonly template?: string;
  /** The workspace root inside the sandbox; default `/home/user/workspace`. */
  readonly root?: string;
  /** Deadline of one control or file request (not of a command); default 30 s. */
  readonly requestTimeoutMs?: number;
}

const CAPABILITIES: BackendCapabilities = Object.freeze({
  streamingExec: true,
  fileAccess: true,
  egressAllowlist: true,
  snapshots: false,
  idleTimeout: true,
  development: false,
});

/** How long past its own deadline a command's stream may stay open before the SDK drops it. */
const STREAM_GRACE_MS = 30_000;

/**
 * The allowlist as E2B's outbound rules: every destination denied (`denyOut` all traffic) except
 * the allowlisted hosts (`allowOut`, which E2B lets win over `denyOut`). E2B's rules name hosts,
 * IPs or CIDRs but no ports, so a rule's port widens to every port of that host.
 */
export function e2bNetwork(egress: readonly EgressRule[]): {
  allowOut?: string[];
  denyOut: string[];
} {
  const hosts = [...new Set(egress.map((r) => r.host.toLowerCase()))];
  return hosts.length === 0
    ? { denyOut: [ALL_TRAFFIC] }
    : { allowOut: hosts, denyOut: [ALL_TRAFFIC] };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

function causeCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Turns what the SDK threw into Mesh's error for a backend that cannot serve: the message names
 * the fix and never carries the API key (the SDK's own message is scrubbed of it).
 */
function unavailable(
  error: unknown,
  doing: string,
  options: ResolvedOptions,
): BackendUnavailableError {
  const scrub = (text: string) => text.split(options.apiKey).join('[API key]');
  const detail = scrub(error instanceof Error ? error.message : String(error));
  const name = errorName(error);
  const status = (error as { statusCode?: unknown }).statusCode;
  let message: string;
  if (name === 'AuthenticationError') {
    message = `E2B refused the API key while ${doing} (401): set a valid E2B API key in the e2b backend's configuration (keys: https://e2b.dev/dashboard?tab=keys)`;
  } else if (name === 'RateLimitError') {
    message = `E2B rate-limited Mesh while ${doing} (429): retry later, or raise the team's sandbox concurrency limit`;
  } else if (name === 'ServiceBusyError') {
    message = `E2B is temporarily unavailable while ${doing} (503): retry later`;
  } else if (
    name === 'SandboxNotFoundError' ||
    name === 'TimeoutError' ||
    name === 'NotFoundError'
  ) {
    message = `the E2B sandbox is gone while ${doing} (killed, or past its timeout): the run needs a new workspace — ${detail}`;
  } else if (name === 'TypeError' || causeCode(error) !== undefined) {
    message = `cannot reach E2B at ${options.apiUrl} while ${doing} (${causeCode(error) ?? detail}): check that this host can reach it, and the e2b backend's apiUrl/domain settings`;
  } else if (typeof status === 'number') {
    message = `E2B answered ${status} while ${doing}: ${detail}`;
  } else {
    message = `E2B failed while ${doing}: ${detail}`;
  }
  return new BackendUnavailableError(message, { cause: error });
}

interface ResolvedOptions {
  readonly apiKey: string;
  readonly apiUrl: string;
  readonly template: string;
  readonly root: string;
  readonly connection: ConnectionOpts;
}

/** The E2B workspace backend (kind `e2b`). */
export function e2bBackend(options: E2bBackendOptions): WorkspaceBackend {
  const domain = options.domain ?? 'e2b.app';
  const apiUrl = options.apiUrl ?? `https://api.${domain}`;
  const resolved: ResolvedOptions = {
    apiKey: options.apiKey,
    apiUrl,
    template: options.template ?? 'base',
    root: resolveRoot(options.root ?? '/home/user/workspace'),
    connection: {
      apiKey: options.apiKey,
      apiUrl,
      domain,
      // Debug mode would send everything to localhost:49983 whatever E2B_DEBUG says.
      debug: false,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      ...(options.sandboxUrl === undefined ? {} : { sandboxUrl: options.sandboxUrl }),
    },
  };
  let closed = false;

  return Object.freeze({
    kind: 'e2b',
    capabilities: CAPABILITIES,
    async provision(spec: ProvisionSpec): Promise<Workspace> {
      if (closed) throw new BackendUnavailableError('the e2b backend is closed');
      let sandbox: Sandbox;
      try {
        sandbox = await Sandbox.create(spec.image ?? resolved.template, {
          ...resolved.connection,
          timeoutMs: spec.limits.idleTimeoutMs,
          metadata: {
            meshWorkspaceId: spec.workspaceId,
            meshRunId: spec.runId,
            meshAgentId: spec.agentId,
          },
          network: e2bNetwork(spec.egress),
          ...(spec.signal ? { signal: spec.signal } : {}),
        });
      } catch (error) {
        throw unavailable(error, 'creating a sandbox', resolved);
      }
      try {
        await sandbox.files.makeDir(resolved.root);
      } catch (error) {
        await Sandbox.kill(sandbox.sandboxId, resolved.connection).catch(() => false);
        throw unavailable(error, 'preparing the workspace root', resolved);
      }
      return e2bWorkspace(sandbox, spec, resolved);
    },
    async releaseById(externalId: string): Promise<void> {
      try {
        await Sandbox.kill(externalId, resolved.connection);
      } catch (error) {
        throw unavailable(error, 'killing a sandbox', resolved);
      }
    },
    close(): Promise<void> {
      closed = true;
      return Promise.resolve();
    },
  });
}

function resolveRoot(root: string): string {
  const normalized = root.replace(/(.)\/+$/, '$1');
  if (!normalized.startsWith('/') || normalized.split('/').includes('..'))
    throw new Error(`the e2b backend's root must be an absolute path without '..': ${root}`);
  return normalized;
}

function e2bWorkspace(sandbox: Sandbox, spec: ProvisionSpec, options: ResolvedOptions): Workspace {
  const root = options.root;
  const credentials = new Map(Object.entries(spec.credentials));
  const idleMs = spec.limits.idleTimeoutMs;
  let expiresAt = performance.now() + idleMs;
  let released: Promise<void> | undefined;

  /**
   * E2B ends a sandbox at a set time, not after idleness: each call pushes that time to an idle
   * window (or the command's deadline, when longer) from now. A call within the first quarter of
   * the window skips the round trip.
   */
  async function keepAlive(needMs: number): Promise<void> {
    const want = Math.max(idleMs, needMs);
    const now = performance.now();
    if (expiresAt - now >= want * 0.75) return;
    try {
      await sandbox.setTimeout(want);
    } catch (error) {
      throw unavailable(error, 'extending the sandbox timeout', options);
    }
    expiresAt = now + want;
  }

  async function exec(request: ExecRequest): Promise<ExecResult> {
    const cwd = resolveWorkspacePath(root, request.cwd ?? '.');
    await keepAlive(request.timeoutMs + STREAM_GRACE_MS);
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    const encoder = new TextEncoder();
    const collect = (stream: 'stdout' | 'stderr', into: Uint8Array[]) => (text: string) => {
      const chunk = encoder.encode(text);
      into.push(chunk);
      request.onOutput?.(stream, chunk);
    };
    const started = performance.now();
    let handle: CommandHandle;
    try {
      handle = await sandbox.commands.run(request.command, {
        background: true,
        cwd,
        envs: { ...request.env, ...Object.fromEntries(credentials) },
        timeoutMs: request.timeoutMs + STREAM_GRACE_MS,
        onStdout: collect('stdout', stdout),
        onStderr: collect('stderr', stderr),
      });
    } catch (error) {
      throw unavailable(error, 'starting a command', options);
    }
    const { exitCode, killedBy } = await settleCommand(handle, request, options);
    const computeMs = Math.max(1, Math.round(performance.now() - started));
    return {
      exitCode,
      stdout: concat(stdout),
      stderr: concat(stderr),
      timedOut: killedBy === 'deadline',
      computeMs,
      // E2B's outbound filter drops refused traffic without telling the client.
      egressRefused: [],
    };
  }

  async function readFile(path: string, maxBytes: number): Promise<Uint8Array> {
    const absolute = resolveWorkspacePath(root, path);
    await keepAlive(0);
    let bytes: Uint8Array;
    try {
      const info = await sandbox.files.getInfo(absolute);
      if (info.type !== FileType.FILE)
        throw new WorkspaceFileError('not_a_file', 'the path is a directory, not a file');
      if (info.size > maxBytes)
        throw new WorkspaceFileError(
          'too_large',
          `the file is ${info.size} bytes, over the ${maxBytes}-byte limit`,
        );
      bytes = await sandbox.files.read(absolute, { format: 'bytes' });
    } catch (error) {
      throw fileError(error, 'reading a file', options);
    }
    if (bytes.byteLength > maxBytes)
      throw new WorkspaceFileError('too_large', `the file grew past the ${maxBytes}-byte limit`);
    return bytes;
  }

  async function writeFile(path: string, content: Uint8Array): Promise<void> {
    const absolute = resolveWorkspacePath(root, path);
    if (absolute === root)
      throw new WorkspaceFileError('not_a_file', 'the workspace root is a directory');
    await keepAlive(0);
    try {
      await sandbox.files.write(absolute, new Blob([content]));
    } catch (error) {
      throw fileError(error, 'writing a file', options);
    }
  }

  return Object.freeze({
    id: spec.workspaceId,
    externalId: sandbox.sandboxId,
    root,
    exec,
    readFile,
    writeFile,
    grant(granted: Readonly<Record<string, string>>): Promise<void> {
      for (const [name, value] of Object.entries(granted)) credentials.set(name, value);
      return Promise.resolve();
    },
    release(): Promise<void> {
      released ??= Sandbox.kill(sandbox.sandboxId, options.connection).then(
        () => undefined,
        (error: unknown) => {
          released = undefined;
          throw unavailable(error, 'killing the sandbox', options);
        },
      );
      return released;
    },
  });
}

/**
 * Waits for a started command: killed at its deadline or when its signal aborts. The exit code
 * is null for a command that was killed.
 */
async function settleCommand(
  handle: CommandHandle,
  request: ExecRequest,
  options: ResolvedOptions,
): Promise<{ exitCode: number | null; killedBy: 'deadline' | 'signal' | undefined }> {
  let killedBy: 'deadline' | 'signal' | undefined;
  const kill = (why: 'deadline' | 'signal') => {
    killedBy ??= why;
    handle.kill().catch(() => false);
  };
  const timer = setTimeout(() => kill('deadline'), request.timeoutMs);
  const onAbort = () => kill('signal');
  request.signal?.addEventListener('abort', onAbort, { once: true });
  if (request.signal?.aborted) onAbort();
  let exitCode: number | null;
  try {
    exitCode = (await handle.wait()).exitCode;
  } catch (error) {
    if (errorName(error) === 'CommandExitError') {
      exitCode = (error as { exitCode: number }).exitCode;
    } else if (killedBy === undefined) {
      throw unavailable(error, 'running a command', options);
    } else {
      exitCode = null;
    }
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
  return { exitCode: killedBy === undefined ? exitCode : null, killedBy };
}

function fileError(error: unknown, doing: string, options: ResolvedOptions): Error {
  if (hasCode(error, WorkspaceFileError.code)) return error;
  const name = errorName(error);
  if (name === 'FileNotFoundError')
    return new WorkspaceFileError('not_found', 'no file at the path');
  if (name === 'NotEnoughSpaceError')
    return new WorkspaceFileError('io', 'the sandbox disk is full');
  if (name === 'InvalidArgumentError')
    return new WorkspaceFileError(
      'not_a_file',
      'the path is not a file (or its parent is not a folder)',
    );
  return unavailable(error, doing, options);
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
