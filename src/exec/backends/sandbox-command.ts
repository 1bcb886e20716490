import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BackendUnavailableError, type WorkspaceLimits } from '../backend.ts';
import type { AgentChannel } from './agent-channel.ts';

/** How the local backend starts one sandbox: bubblewrap's command line and its environment. */

const AGENT = fileURLToPath(new URL('./sandbox-agent.mjs', import.meta.url));
export const WORKSPACE_ROOT = '/workspace';
const PROXY = 'http://127.0.0.1:3128';

/** The bubblewrap command line for one workspace, its root, /tmp and /dev/shm size-capped in memory. */
function bwrapArguments(dir: string, hostname: string, limits: WorkspaceLimits): string[] {
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    hostname,
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--symlink',
    'usr/lib',
    '/lib',
  ];
  if (existsSync('/usr/lib64')) args.push('--symlink', 'usr/lib64', '/lib64');
  if (existsSync('/usr/lib32')) args.push('--symlink', 'usr/lib32', '/lib32');
  for (const certs of ['/etc/ssl', '/etc/ca-certificates', '/etc/alternatives'])
    if (existsSync(certs)) args.push('--ro-bind', certs, certs);
  args.push(
    '--ro-bind',
    join(dir, 'etc', 'passwd'),
    '/etc/passwd',
    '--ro-bind',
    join(dir, 'etc', 'group'),
    '/etc/group',
    '--ro-bind',
    join(dir, 'etc', 'hosts'),
    '/etc/hosts',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // bubblewrap's /dev/shm is a tmpfs of half the host's memory: capped like /tmp, and /dev
    // itself made read-only (its device nodes still read and write) so nothing is stored there.
    '--size',
    String(limits.tmpMb * 1024 * 1024),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    String(limits.tmpMb * 1024 * 1024),
    '--tmpfs',
    '/tmp',
    '--size',
    String(limits.diskMb * 1024 * 1024),
    '--tmpfs',
    WORKSPACE_ROOT,
    '--dir',
    `${WORKSPACE_ROOT}/.home`,
    // Read-only: the egress socket is there to connect to, and nothing inside may replace it.
    '--ro-bind',
    join(dir, 'run'),
    '/run/mesh',
    '--ro-bind',
    AGENT,
    '/opt/mesh/sandbox-agent.mjs',
    '--chdir',
    WORKSPACE_ROOT,
  );
  return args;
}

/** The environment every command starts from: no host variable passes into a sandbox. */
export function baseEnvironment(
  credentials: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: `${WORKSPACE_ROOT}/.home`,
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    http_proxy: PROXY,
    https_proxy: PROXY,
    HTTP_PROXY: PROXY,
    HTTPS_PROXY: PROXY,
    ...credentials,
  };
}

/**
 * The command that starts a workspace's sandbox and its agent. With a cgroup, a shell writes its
 * own pid into it before it becomes bubblewrap, so every task the sandbox makes is in it.
 */
export function sandboxCommand(
  bwrap: string,
  dir: string,
  limits: WorkspaceLimits,
  cgroupProcs: string | undefined,
): string[] {
  const agentLimits = {
    memoryMb: limits.memoryMb,
    fileSizeMb: limits.fileSizeMb,
    processes: limits.processes,
  };
  const command = [
    bwrap,
    ...bwrapArguments(dir, 'workspace', limits),
    '/usr/bin/node',
    '/opt/mesh/sandbox-agent.mjs',
    JSON.stringify(agentLimits),
  ];
  if (cgroupProcs === undefined) return command;
  return [
    '/bin/sh',
    '-c',
    'echo $$ > "$1" || exit 97; shift; exec "$@"',
    'mesh-sandbox',
    cgroupProcs,
    ...command,
  ];
}

/** Resolves when the sandbox's agent says it is ready; rejects, naming why, when it cannot be. */
export function sandboxStarted(
  sandbox: ChildProcess,
  agent: AgentChannel,
  bwrap: string,
  timeoutMs: number,
): Promise<void> {
  const notInstalled = `bubblewrap (${bwrap}) is not installed; install Debian's bubblewrap package`;
  return new Promise<void>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(
      () => reject(new BackendUnavailableError('the sandbox did not start in time')),
      timeoutMs,
    );
    sandbox.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-2000);
    });
    void agent.ready.then(() => {
      clearTimeout(timer);
      resolve();
    });
    sandbox.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new BackendUnavailableError(
          error.code === 'ENOENT'
            ? notInstalled
            : `bubblewrap could not start (${error.code ?? 'error'})`,
          { cause: error },
        ),
      );
    });
    sandbox.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new BackendUnavailableError(
          code === 127
            ? notInstalled
            : `the sandbox exited at start (code ${code}): ${stderr.trim().slice(0, 500)}`,
        ),
      );
    });
  });
}
