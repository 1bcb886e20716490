import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { eachLine } from './lines.ts';

/** An MCP server this project did not write, running as a child process on loopback. */
export interface ThirdPartyMcpServer {
  /** Its Streamable HTTP endpoint, always on 127.0.0.1. */
  readonly url: string;
  /** Everything it printed (stdout and stderr), line by line. */
  readonly lines: readonly string[];
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, for a server that takes its port from the environment. */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port was assigned');
  return address.port;
}

const PRELOAD = join(process.cwd(), 'test', 'support', 'loopback-listen.js');
const READY = /^loopback-listen: listening on 127\.0\.0\.1:(\d+)$/;

/**
 * Starts `node <entry> ...args` with its port in `portVariable`, bound to loopback by a preload
 * (these servers listen on every interface and have no host setting), and resolves once it
 * listens. The child gets a minimal environment: nothing of the test's own reaches it.
 */
export async function startThirdPartyMcpServer(options: {
  readonly entry: string;
  readonly args?: readonly string[];
  readonly portVariable: string;
  readonly path?: string;
  readonly timeoutMs?: number;
  /** The port to listen on (a restart on the same address); a free one otherwise. */
  readonly port?: number;
}): Promise<ThirdPartyMcpServer> {
  const port = options.port ?? (await freeLoopbackPort());
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', PRELOAD, options.entry, ...(options.args ?? [])],
    {
      env: { PATH: process.env['PATH'] ?? '', [options.portVariable]: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.entry} did not listen in time:\n${lines.join('\n')}`)),
      options.timeoutMs ?? 20_000,
    );
    const onLine = (line: string) => {
      lines.push(line);
      const bound = READY.exec(line);
      if (bound && Number(bound[1]) === port) {
        clearTimeout(timer);
        resolve();
      }
    };
    eachLine(child.stdout, onLine);
    eachLine(child.stderr, onLine);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${options.entry} exited before listening:\n${lines.join('\n')}`));
    });
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await ready;
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}${options.path ?? '/mcp'}`, lines, close };
}
