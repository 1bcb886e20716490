import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BrowserBackendUnavailableError,
  type BrowserBackend,
  type BrowserProvisionSpec,
  type ProvisionedSession,
} from '../backend.ts';
import { startEgressProxy, type EgressProxy } from '../../egress/egress-proxy.ts';
import { browserEgressAdmission } from '../egress.ts';

/** Debian's chromium package. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** How long Chromium may take to open its DevTools endpoint. */
const START_TIMEOUT_MS = 20_000;
const PROFILE_PREFIX = 'mesh-browser-';

/** Where a session's egress proxy listens and what it allows, kept in its profile folder. */
const EGRESS_FILE = 'mesh-egress.json';

/**
 * The development browser backend: one headless Chromium process per session on this machine,
 * with its DevTools endpoint on a loopback port. No live view, takeover or recording of its own
 * (Mesh adds what it can above the contract). The external id names the process and its profile
 * folder, so any process on this machine can end it.
 *
 * Its only way out is Mesh's egress proxy, one per session on a loopback port, loopback itself
 * included (`<-loopback>`): every connection Chromium opens (a redirect hop, a subresource, a new
 * window, a WebSocket) is checked where it opens, after DNS, against the session's grant. A
 * process that attaches to a session whose proxy died with its holder starts it again on the same
 * port, from what the profile folder records.
 */
export function localBrowserBackend(
  options: { readonly executablePath?: string } = {},
): BrowserBackend {
  const executable = options.executablePath ?? CHROMIUM_PATH;
  const mine = new Map<string, ChildProcess>();
  const proxies = new Map<string, EgressProxy>();

  async function provision(spec: BrowserProvisionSpec): Promise<ProvisionedSession> {
    const profile = mkdtempSync(join(tmpdir(), PROFILE_PREFIX));
    const allowLoopback = spec.egress?.allowLoopback ?? false;
    const proxy = await startEgressProxy({ port: 0 }, browserEgressAdmission({ allowLoopback }));
    writeFileSync(join(profile, EGRESS_FILE), JSON.stringify({ port: proxy.port, allowLoopback }));
    const child = spawn(executable, chromiumArgs(profile, proxy.port), {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let url: string;
    try {
      url = await devtoolsUrl(child, spec.signal);
    } catch (error) {
      kill(child.pid);
      await proxy.close();
      rmSync(profile, { recursive: true, force: true });
      const message = error instanceof Error ? error.message : String(error);
      throw new BrowserBackendUnavailableError(`Chromium did not start: ${message}`, {
        cause: error,
      });
    }
    const externalId = `${child.pid}:${profile}`;
    mine.set(externalId, child);
    proxies.set(externalId, proxy);
    child.once('exit', () => mine.delete(externalId));
    return { externalId, cdp: { url } };
  }

  async function release(externalId: string): Promise<void> {
    const parsed = parseExternalId(externalId);
    if (!parsed) return;
    const { pid, profile } = parsed;
    const child = mine.get(externalId);
    mine.delete(externalId);
    await proxies.get(externalId)?.close();
    proxies.delete(externalId);
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
      const url = devtoolsEndpointOf(parsed.profile);
      await keepProxy(externalId, parsed.profile);
      return { url };
    },
    async close() {
      for (const externalId of [...mine.keys()]) await release(externalId);
      for (const proxy of proxies.values()) await proxy.close();
      proxies.clear();
    },
  };

  /**
   * Makes sure the session's egress proxy is listening: this process's, another live one's on
   * the same port, or (its holder gone) a new one here on that port with the same rule. A
   * Chromium whose proxy cannot be had reaches nothing: it fails closed.
   */
  async function keepProxy(externalId: string, profile: string): Promise<void> {
    if (proxies.has(externalId)) return;
    let kept: { port?: unknown; allowLoopback?: unknown };
    try {
      kept = JSON.parse(readFileSync(join(profile, EGRESS_FILE), 'utf8')) as typeof kept;
    } catch (error) {
      throw new BrowserBackendUnavailableError('the session’s egress rule is unreadable', {
        cause: error,
      });
    }
    if (typeof kept.port !== 'number' || typeof kept.allowLoopback !== 'boolean')
      throw new BrowserBackendUnavailableError('the session’s egress rule is unreadable');
    try {
      const proxy = await startEgressProxy(
        { port: kept.port },
        browserEgressAdmission({ allowLoopback: kept.allowLoopback }),
      );
      proxies.set(externalId, proxy);
    } catch (error) {
      // Another process on this machine serves it: it holds the same rule.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

/** How a session's Chromium is started: headless, on its profile, through its egress proxy. */
function chromiumArgs(profile: string, proxyPort: EgressProxy['port']): string[] {
  return [
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
    `--proxy-server=http://127.0.0.1:${String(proxyPort)}`,
    // Chromium sends loopback past any proxy unless told not to: nothing goes around it.
    '--proxy-bypass-list=<-loopback>',
    'about:blank',
  ];
}

/** The DevTools URL a running session's Chromium wrote into its profile folder. */
function devtoolsEndpointOf(profile: string): string {
  let lines: string[];
  try {
    lines = readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n');
  } catch (error) {
    throw new BrowserBackendUnavailableError('the session’s DevTools endpoint is unknown', {
      cause: error,
    });
  }
  const port = Number(lines[0]);
  const path = lines[1]?.trim() ?? '';
  if (!Number.isInteger(port) || port <= 0 || !path.startsWith('/devtools/browser/'))
    throw new BrowserBackendUnavailableError('the session’s DevTools endpoint is unreadable');
  return `ws://127.0.0.1:${port}${path}`;
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
