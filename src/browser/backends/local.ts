import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BrowserBackendUnavailableError,
  type BrowserBackend,
  type BrowserProvisionSpec,
  type ProvisionedSession,
} from '../backend.ts';

/** Debian's chromium package. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** How long Chromium may take to open its DevTools endpoint. */
const START_TIMEOUT_MS = 20_000;
const PROFILE_PREFIX = 'mesh-browser-';

/**
 * The development browser backend: one headless Chromium process per session on this machine,
 * with its DevTools endpoint on a loopback port. No live view, takeover or recording of its own
 * (Mesh adds what it can above the contract). The external id names the process and its profile
 * folder, so any process on this machine can end it.
 */
export function localBrowserBackend(
  options: { readonly executablePath?: string } = {},
): BrowserBackend {
  const executable = options.executablePath ?? CHROMIUM_PATH;
  const mine = new Map<string, ChildProcess>();

  async function provision(spec: BrowserProvisionSpec): Promise<ProvisionedSession> {
    const profile = mkdtempSync(join(tmpdir(), PROFILE_PREFIX));
    const child = spawn(
      executable,
      [
        '--headless=new',
        '--remote-debugging-address=127.0.0.1',
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--no-default-browser-check',
        '--window-size=1280,900',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    let url: string;
    try {
      url = await devtoolsUrl(child, spec.signal);
    } catch (error) {
      kill(child.pid);
      rmSync(profile, { recursive: true, force: true });
      const message = error instanceof Error ? error.message : String(error);
      throw new BrowserBackendUnavailableError(`Chromium did not start: ${message}`, {
        cause: error,
      });
    }
    const externalId = `${child.pid}:${profile}`;
    mine.set(externalId, child);
    child.once('exit', () => mine.delete(externalId));
    return { externalId, cdp: { url } };
  }

  async function release(externalId: string): Promise<void> {
    const parsed = parseExternalId(externalId);
    if (!parsed) return;
    const { pid, profile } = parsed;
    const child = mine.get(externalId);
    mine.delete(externalId);
    // A pid from another process is ended only while it is still that Chromium (its command
    // line names the profile): a pid reused by something else is left alone.
    if (child || commandLineOf(pid).includes(profile)) {
      kill(pid);
      if (child && child.exitCode === null && child.signalCode === null)
        await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(profile, { recursive: true, force: true });
  }

  return {
    kind: 'local',
    capabilities: {
      liveView: false,
      humanTakeover: false,
      recordings: false,
      warmPool: false,
      development: true,
    },
    provision,
    release,
    async attach(externalId) {
      // The session's Chromium writes its DevTools port and path into its profile folder.
      const parsed = parseExternalId(externalId);
      if (!parsed || !commandLineOf(parsed.pid).includes(parsed.profile))
        throw new BrowserBackendUnavailableError('the session’s Chromium is no longer running');
      let lines: string[];
      try {
        lines = readFileSync(join(parsed.profile, 'DevToolsActivePort'), 'utf8').split('\n');
      } catch (error) {
        throw new BrowserBackendUnavailableError('the session’s DevTools endpoint is unknown', {
          cause: error,
        });
      }
      const port = Number(lines[0]);
      const path = lines[1]?.trim() ?? '';
      if (!Number.isInteger(port) || port <= 0 || !path.startsWith('/devtools/browser/'))
        throw new BrowserBackendUnavailableError('the session’s DevTools endpoint is unreadable');
      return { url: `ws://127.0.0.1:${port}${path}` };
    },
    async close() {
      for (const externalId of [...mine.keys()]) await release(externalId);
    },
  };
}

/** A local session's external id: its Chromium's pid and profile folder. */
function parseExternalId(externalId: string): { pid: number; profile: string } | undefined {
  const at = externalId.indexOf(':');
  const pid = Number(externalId.slice(0, at));
  const profile = externalId.slice(at + 1);
  if (!Number.isInteger(pid) || pid <= 0 || !profile.includes(PROFILE_PREFIX)) return undefined;
  return { pid, profile };
}

/** Reads Chromium's "DevTools listening on ws://…" line from its standard error. */
function devtoolsUrl(child: ChildProcess, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => finish(new Error(`no DevTools endpoint within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString('utf8')).slice(-8192);
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (match?.[1]) finish(undefined, match[1]);
    };
    const onExit = (code: number | null) =>
      finish(new Error(`it exited (code ${code}) before opening its DevTools endpoint`));
    const onError = (error: Error) => finish(error);
    const onAbort = () => finish(new Error('aborted'));
    function finish(error: Error | undefined, url?: string) {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      // Chromium keeps writing to standard error; nobody reads it from here on.
      child.stderr?.resume();
      if (error) reject(error);
      else resolve(url ?? '');
    }
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Ends the process group Chromium leads (its renderers and helpers with it). */
function kill(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}
