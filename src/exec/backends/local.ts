import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackendUnavailableError,
  WorkspaceFileError,
  type BackendCapabilities,
  type ExecRequest,
  type ExecResult,
  type ProvisionSpec,
  type Workspace,
  type WorkspaceBackend,
} from '../backend.ts';
import { startEgressProxy, type EgressProxy } from '../../egress/egress-proxy.ts';
import { workspaceAdmission } from '../workspace-egress.ts';
import { AgentChannel, type AgentMessage } from './agent-channel.ts';
import { openPidsCgroup, removePidsCgroup, type PidsCgroup } from './pids-cgroup.ts';
import {
  baseEnvironment,
  sandboxCommand,
  sandboxStarted,
  WORKSPACE_ROOT,
} from './sandbox-command.ts';

/**
 * The local backend: development only. Each workspace is a bubblewrap sandbox with every
 * namespace unshared (user, pid, network, ipc, uts, cgroup), a size-capped in-memory root at
 * /workspace and /tmp, the host's system folders read-only (/usr and the CA certificates, nothing
 * else of /etc), and no network but its own loopback, where port 3128 leads to the egress proxy
 * Mesh runs for the workspace. No host file outside those folders is visible: not MESH_HOME, not
 * the instance key, not the control plane's ports. Its processes are held to their limit (a pids
 * cgroup, or `ulimit -p`).
 *
 * One long-lived process per workspace, the sandbox agent (sandbox-agent.mjs), takes requests on
 * its standard input (see agent-channel.ts): commands, file reads and writes. The control plane
 * never touches the workspace root from outside, so a symlink a command made resolves in the
 * sandbox's view.
 */

/** Room for the sandbox's own tasks (bubblewrap, the agent and its threads) while it starts. */
const AGENT_TASKS = 32;
/** sockaddr_un holds 108 bytes; the socket paths must fit. */
const MAX_SOCKET_PATH = 100;

export interface LocalBackendOptions {
  /** Where workspace folders live (each `<dir>/<id>/{root,run}`); a private temp folder by default. */
  readonly directory?: string;
  /** The bubblewrap binary (Debian's `bwrap`). */
  readonly bwrap?: string;
  /** How long a sandbox may take to start before provisioning fails. */
  readonly startTimeoutMs?: number;
}

export const LOCAL_CAPABILITIES: BackendCapabilities = Object.freeze({
  streamingExec: true,
  fileAccess: true,
  egressAllowlist: true,
  snapshots: false,
  idleTimeout: false,
  development: true,
});

const FILE_REASONS = new Set(['outside_root', 'not_found', 'not_a_file', 'too_large', 'io']);

function fileError(m: { reason: string; message: string }): WorkspaceFileError {
  const reason = FILE_REASONS.has(m.reason) ? m.reason : 'io';
  return new WorkspaceFileError(reason as WorkspaceFileError['reason'], m.message);
}

class LocalWorkspace implements Workspace {
  readonly root = WORKSPACE_ROOT;
  private credentials: Record<string, string>;
  private released = false;

  constructor(
    readonly id: string,
    readonly externalId: string,
    private readonly dir: string,
    private readonly sandbox: ChildProcess,
    private readonly agent: AgentChannel,
    private readonly proxy: EgressProxy,
    private readonly cgroup: PidsCgroup | undefined,
    credentials: Readonly<Record<string, string>>,
  ) {
    this.credentials = { ...credentials };
  }

  private alive(): void {
    if (this.released) throw new BackendUnavailableError(`workspace ${this.id} was released`);
    const broken = this.agent.broken;
    if (broken) throw new BackendUnavailableError(`${broken}; the workspace was stopped`);
    if (this.sandbox.exitCode !== null || this.sandbox.signalCode !== null)
      throw new BackendUnavailableError(`workspace ${this.id}'s sandbox has exited`);
  }

  async exec(req: ExecRequest): Promise<ExecResult> {
    this.alive();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exit: Extract<AgentMessage, { t: 'exit' }> | undefined;
    let failure: Extract<AgentMessage, { t: 'error' }> | undefined;
    this.proxy.takeRefused();
    await this.agent.request(
      {
        op: 'exec',
        command: req.command,
        cwd: req.cwd ?? '.',
        timeoutMs: req.timeoutMs,
        env: { ...baseEnvironment(this.credentials), ...req.env, ...this.credentials },
      },
      (m) => {
        if (m.t === 'out') {
          (m.s === 1 ? out : err).push(m.d);
          req.onOutput?.(m.s === 1 ? 'stdout' : 'stderr', m.d);
        } else if (m.t === 'exit') exit = m;
        else if (m.t === 'error') failure = m;
      },
      req.signal,
    );
    if (failure) throw fileError(failure);
    if (!exit) {
      if (req.signal?.aborted) throw new BackendUnavailableError('the command was cancelled');
      throw new BackendUnavailableError(`workspace ${this.id}'s sandbox ended during the command`);
    }
    return {
      exitCode: exit.timedOut ? null : exit.code,
      stdout: Buffer.concat(out),
      stderr: Buffer.concat(err),
      timedOut: exit.timedOut,
      computeMs: Math.max(1, Math.round(exit.ms)),
      egressRefused: this.proxy.takeRefused(),
    };
  }

  async readFile(path: string, maxBytes: number): Promise<Uint8Array> {
    this.alive();
    let content: Buffer | undefined;
    let failure: Extract<AgentMessage, { t: 'error' }> | undefined;
    await this.agent.request({ op: 'read', path, maxBytes }, (m) => {
      if (m.t === 'file') content = m.d;
      else if (m.t === 'error') failure = m;
    });
    if (failure) throw fileError(failure);
    if (!content) throw new WorkspaceFileError('io', 'the sandbox agent returned no file');
    return content;
  }

  async writeFile(path: string, content: Uint8Array): Promise<void> {
    this.alive();
    let ok = false;
    let failure: Extract<AgentMessage, { t: 'error' }> | undefined;
    await this.agent.request(
      { op: 'write', path, d: Buffer.from(content).toString('base64') },
      (m) => {
        if (m.t === 'ok') ok = true;
        else if (m.t === 'error') failure = m;
      },
    );
    if (failure) throw fileError(failure);
    if (!ok) throw new WorkspaceFileError('io', 'the sandbox agent did not confirm the write');
  }

  grant(credentials: Readonly<Record<string, string>>): Promise<void> {
    this.alive();
    this.credentials = { ...this.credentials, ...credentials };
    return Promise.resolve();
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.credentials = {};
    await stopSandbox(this.sandbox);
    await this.proxy.close();
    await this.cgroup?.remove();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function stopSandbox(sandbox: ChildProcess): Promise<void> {
  if (sandbox.exitCode !== null || sandbox.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    sandbox.once('exit', () => resolve());
    sandbox.kill('SIGKILL');
  });
}

/** Whether a pid is a bubblewrap process of this workspace folder (pids are reused). */
async function isSandboxOf(pid: number, dir: string): Promise<boolean> {
  try {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('bwrap') && cmdline.includes(join(dir, 'run'));
  } catch {
    return false;
  }
}

/** The local bubblewrap backend (development only). */
export function localBackend(options: LocalBackendOptions = {}): WorkspaceBackend {
  const directory =
    options.directory ?? join(tmpdir(), `mesh-workspaces-${process.getuid?.() ?? 0}`);
  const bwrap = options.bwrap ?? 'bwrap';
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const live = new Set<LocalWorkspace>();

  const folderOf = (externalId: string) => {
    if (!/^[0-9a-f-]{36}$/.test(externalId))
      throw new BackendUnavailableError('a local workspace id is a UUID');
    return join(directory, externalId);
  };

  return {
    kind: 'local',
    capabilities: LOCAL_CAPABILITIES,

    async provision(spec: ProvisionSpec): Promise<Workspace> {
      const dir = folderOf(spec.workspaceId);
      if (join(dir, 'run', 'egress.sock').length > MAX_SOCKET_PATH)
        throw new BackendUnavailableError(
          `the local backend's folder ${directory} is too long for a socket path; choose a shorter one`,
        );
      await mkdir(directory, { recursive: true, mode: 0o700 });
      await chmod(directory, 0o700);
      await mkdir(join(dir, 'run'), { recursive: true });
      await mkdir(join(dir, 'etc'), { recursive: true });
      await writeFile(
        join(dir, 'etc', 'passwd'),
        `root:x:0:0:workspace:${WORKSPACE_ROOT}/.home:/bin/sh\n`,
      );
      await writeFile(join(dir, 'etc', 'group'), 'root:x:0:\n');
      await writeFile(join(dir, 'etc', 'hosts'), '127.0.0.1 localhost\n::1 localhost\n');
      const proxy = await startEgressProxy(
        { path: join(dir, 'run', 'egress.sock') },
        workspaceAdmission(spec.egress),
      );
      // The process limit: a pids cgroup when this process may make one (root must: the
      // kernel does not hold root to RLIMIT_NPROC), else the commands' `ulimit -p`.
      const cgroup = await openPidsCgroup(spec.workspaceId, spec.limits.processes + AGENT_TASKS);
      if (!cgroup && process.getuid?.() === 0) {
        await proxy.close();
        await rm(dir, { recursive: true, force: true });
        throw new BackendUnavailableError(
          'the local backend runs as root without a writable pids cgroup (/sys/fs/cgroup), so it cannot hold a workspace to its process limit',
        );
      }
      const [file, ...args] = sandboxCommand(bwrap, dir, spec.limits, cgroup?.procs);
      const sandbox = spawn(
        file as string,
        args,
        // The sandbox agent starts from an empty environment: nothing of the host's passes in.
        { env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, stdio: ['pipe', 'pipe', 'pipe'] },
      );
      // A message that is not the protocol stops the sandbox: whatever sent it is not trusted.
      const agent = new AgentChannel(sandbox.stdin, sandbox.stdout, () => {
        sandbox.kill('SIGKILL');
      });
      try {
        await sandboxStarted(sandbox, agent, bwrap, startTimeoutMs);
        // Started: the commands get exactly their limit beside the sandbox's own tasks.
        await cgroup?.allowMore(spec.limits.processes).catch((error: unknown) => {
          throw new BackendUnavailableError('the sandbox’s process limit could not be set', {
            cause: error,
          });
        });
      } catch (error) {
        await stopSandbox(sandbox);
        await proxy.close();
        await cgroup?.remove();
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
      await writeFile(join(dir, 'run', 'sandbox.pid'), String(sandbox.pid));
      const workspace = new LocalWorkspace(
        spec.workspaceId,
        spec.workspaceId,
        dir,
        sandbox,
        agent,
        proxy,
        cgroup,
        spec.credentials,
      );
      live.add(workspace);
      sandbox.once('exit', () => live.delete(workspace));
      return workspace;
    },

    async releaseById(externalId: string): Promise<void> {
      for (const w of live) {
        if (w.externalId === externalId) {
          live.delete(w);
          await w.release();
          return;
        }
      }
      const dir = folderOf(externalId);
      const pid = Number(await readFile(join(dir, 'run', 'sandbox.pid'), 'utf8').catch(() => ''));
      if (Number.isSafeInteger(pid) && pid > 0 && (await isSandboxOf(pid, dir))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await removePidsCgroup(externalId);
      await rm(dir, { recursive: true, force: true });
    },

    async close(): Promise<void> {
      await Promise.all([...live].map((w) => w.release()));
      live.clear();
    },
  };
}
