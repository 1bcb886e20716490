import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A pids cgroup that holds one sandbox, so its process limit holds whoever runs Mesh. The
 * kernel does not apply RLIMIT_NPROC (`ulimit -p`) to the host's root user, whose uid a sandbox
 * started by root maps to; a cgroup's `pids.max` applies to every task in it, threads included.
 */
export interface PidsCgroup {
  /** The file a process writes its pid to, to enter the cgroup (and its children with it). */
  readonly procs: string;
  /**
   * Sets the limit to the tasks in the cgroup now (the sandbox and its agent, started) plus
   * `more`: what the workspace's commands may run beside them.
   */
  allowMore(more: number): Promise<void>;
  /** Removes the cgroup once its tasks are gone. */
  remove(): Promise<void>;
}

const ROOT = '/sys/fs/cgroup';

async function writable(path: string): Promise<boolean> {
  try {
    await access(path, 2);
    return true;
  } catch {
    return false;
  }
}

/** The folder workspace cgroups are made in: cgroup v1's pids hierarchy, or v2's root. */
async function pidsParent(): Promise<string | undefined> {
  const v1 = join(ROOT, 'pids');
  if (await writable(join(v1, 'cgroup.procs'))) return join(v1, 'mesh-workspaces');
  const controllers = await readFile(join(ROOT, 'cgroup.controllers'), 'utf8').catch(() => '');
  if (!controllers.split(/\s+/).includes('pids')) return undefined;
  // v2: the root cgroup may enable a controller for its children while holding processes.
  const subtree = join(ROOT, 'cgroup.subtree_control');
  if (!(await writable(subtree))) return undefined;
  const enabled = await writeFile(subtree, '+pids').then(
    () => true,
    () => false,
  );
  if (!enabled) return undefined;
  const parent = join(ROOT, 'mesh-workspaces');
  await mkdir(parent, { recursive: true }).catch(() => undefined);
  await writeFile(join(parent, 'cgroup.subtree_control'), '+pids').catch(() => undefined);
  return parent;
}

/**
 * Makes the cgroup `name` with `pids.max` = `max`, or returns undefined when this process may
 * not (not root, or no writable pids controller).
 */
export async function openPidsCgroup(name: string, max: number): Promise<PidsCgroup | undefined> {
  const parent = await pidsParent();
  if (!parent) return undefined;
  const path = join(parent, name);
  try {
    await mkdir(path, { recursive: true });
    await writeFile(join(path, 'pids.max'), String(max));
  } catch {
    await rmdir(path).catch(() => undefined);
    return undefined;
  }
  return {
    procs: join(path, 'cgroup.procs'),
    async allowMore(more) {
      const current = Number((await readFile(join(path, 'pids.current'), 'utf8')).trim());
      await writeFile(join(path, 'pids.max'), String(current + more));
    },
    async remove() {
      // The killed sandbox's tasks leave the cgroup a moment after their parent reaped them.
      for (let attempt = 0; attempt < 50; attempt++) {
        const removed = await rmdir(path).then(
          () => true,
          (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
        );
        if (removed) return;
        await sleep(20);
      }
    },
  };
}

/** Removes the cgroup `name` of a sandbox this process did not start (a reaped workspace). */
export async function removePidsCgroup(name: string): Promise<void> {
  const parent = await pidsParent();
  if (parent) await rmdir(join(parent, name)).catch(() => undefined);
}
