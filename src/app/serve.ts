import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordServing } from '../store/home-lock.ts';
import { CLI_SOCKET_NAME } from './cli-socket.ts';
import type { Mesh } from './mesh.ts';
import { createOperatorToken, ensureFirstOperatorToken } from './operators/operator-auth.ts';
import { createAgent } from './agents/agents.ts';
import { addModelProvider } from './backends/model-providers.ts';
import { findAgent } from './agents/reads.ts';
import { findModelProvider } from './backends/provider-reads.ts';
import { meshWorker } from './conversations/turns.ts';
import { meshVersion } from './version.ts';

const DEMO_SCRIPT = new URL('../../examples/demo-script.json', import.meta.url);

/** The demo agent and its scripted provider, created when missing. Returns whether it created it. */
export async function ensureDemo(mesh: Mesh): Promise<boolean> {
  if (await findAgent(mesh, 'demo')) return false;
  if (!(await findModelProvider(mesh, 'demo'))) {
    await addModelProvider(mesh, {
      name: 'demo',
      kind: 'scripted',
      script: JSON.parse(readFileSync(DEMO_SCRIPT, 'utf8')) as unknown,
    });
  }
  await createAgent(mesh, {
    name: 'demo',
    provider: 'demo',
    model: 'scripted-demo',
    persona:
      'You are the Mesh demo agent. You remember what you are told and recall it on request.',
  });
  return true;
}

/** The HTTP face as the wiring starts it: the API and the UI over a Mesh, listening. */
export type StartHttp = (
  mesh: Mesh,
  options: {
    readonly host: string;
    readonly port: number;
    readonly log: (line: string) => void;
    readonly version: string;
  },
) => Promise<{ readonly url: string; close(): Promise<void> }>;

/** The CLI's socket as the wiring starts it: the API served on a Unix socket, listening. */
export type StartSocket = (
  mesh: Mesh,
  path: string,
  options: { readonly log: (line: string) => void; readonly version: string },
) => Promise<{ readonly path: string; close(): Promise<void> }>;

/** What `mesh serve` runs, and how. */
export interface ServeOptions {
  /** Starts the HTTP face (`startServer` of src/server): handed in, since app sits below it. */
  readonly http: StartHttp;
  /** Starts the CLI's socket (`listenOnSocket` of src/server), on the embedded database. */
  readonly socket: StartSocket;
  readonly host: string;
  readonly port: number;
  /** Create the demo agent with a scripted model when it is missing. */
  readonly demo: boolean;
  /** Mint another operator token, to be printed once. */
  readonly newToken: boolean;
  /**
   * The home whose embedded database `mesh` holds (this process has its lock). The served URL and
   * the CLI's socket are recorded there. Undefined on PostgreSQL: there is no lock and no socket.
   */
  readonly meshHome?: string;
  readonly log: (line: string) => void;
}

/** A serving Mesh. `close` stops the HTTP server, the CLI socket and the worker, not the Mesh. */
export interface Serving {
  readonly url: string;
  /** The operator token to show once: minted now, or created on first start. */
  readonly token: string | undefined;
  /** The socket the CLI uses beside this server, when there is one. */
  readonly socket: string | undefined;
  /** Resolves once the worker has looked for runnable runs, found none and holds none. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The production wiring of `mesh serve` over an open Mesh: the demo set-up, the first operator
 * token, the HTTP server, the CLI's socket (embedded database only) and the run worker that
 * resumes what a crash left behind.
 */
export async function serveMesh(mesh: Mesh, options: ServeOptions): Promise<Serving> {
  // Worker and socket log lines quote failures, and failures quote the outside world.
  const log = (line: string) => options.log(mesh.redactor.text(line));
  if (options.demo && (await ensureDemo(mesh))) log('Created the demo agent (scripted model).');
  const first = await ensureFirstOperatorToken(mesh.db);
  const minted = options.newToken ? await createOperatorToken(mesh.db, 'mesh serve') : undefined;
  const server = await options.http(mesh, {
    host: options.host,
    port: options.port,
    log,
    version: meshVersion(),
  });
  let cli: Awaited<ReturnType<StartSocket>> | undefined;
  if (options.meshHome !== undefined) {
    try {
      cli = await options.socket(mesh, join(options.meshHome, CLI_SOCKET_NAME), {
        log,
        version: meshVersion(),
      });
    } catch (error) {
      // The server still serves; CLI commands on this home are then refused while it runs.
      log(
        `Not listening for the CLI: ${error instanceof Error ? error.message : String(error)}; other mesh commands on this home wait until the server stops.`,
      );
    }
    recordServing(options.meshHome, { url: server.url, ...(cli ? { socket: cli.path } : {}) });
  }
  const worker = mesh.runs.attach(meshWorker(mesh, log));
  const sweepers = [
    startSweeper('The workspace reaper', REAP_INTERVAL_MS, log, async () => {
      const released = await mesh.workspaces.reap();
      if (released > 0) log(`Released ${released} workspace(s) whose run had died.`);
    }),
    startSweeper('The browser session reaper', REAP_INTERVAL_MS, log, async () => {
      const released = await mesh.browsers.reap();
      if (released > 0) log(`Released ${released} browser session(s) whose run had died.`);
    }),
    startSweeper('The package lifecycle sweeper', REAP_INTERVAL_MS, log, async () => {
      const { lifecycleOf } = await import('./packages/installs.ts');
      const resumed = await lifecycleOf(mesh).resumeUnfinished();
      if (resumed > 0) log(`Finished ${resumed} package transition(s) a stopped process left.`);
      // Drift is recorded and shown; an upgrade runs on_enable, so only on an operator's word.
      const { sweepDrift } = await import('./packages/drift.ts');
      const drift = await sweepDrift(mesh);
      if (drift.upgraded > 0)
        log(
          `Upgraded ${drift.upgraded} package install(s) to the version now running, on an operator's standing instruction.`,
        );
      else if (drift.newlySeen > 0)
        log(
          `${drift.newlySeen} package install(s) are pinned to another version than the one now running; upgrade them with mesh packages upgrade (see mesh packages installed).`,
        );
    }),
    startSweeper('The question sweeper', QUESTION_SWEEP_INTERVAL_MS, log, async () => {
      const { expireQuestions } = await import('./runs/question-expiry.ts');
      const ended = await expireQuestions(mesh);
      if (ended > 0) log(`Ended ${ended} run(s) whose question expired unanswered.`);
    }),
    startSweeper('The commitment sweeper', QUESTION_SWEEP_INTERVAL_MS, log, async () => {
      const { remindDueCommitments } = await import('./agents/commitment-reminders.ts');
      const reminded = await remindDueCommitments(mesh);
      if (reminded > 0) log(`Reminded ${reminded} agent(s) of a commitment that fell due.`);
    }),
  ];
  return {
    url: server.url,
    token: minted?.token ?? first?.token,
    socket: cli?.path,
    idle: () => worker.idle(),
    async close() {
      for (const sweeper of sweepers) sweeper.stop();
      await cli?.close();
      await server.close();
      await mesh.runs.close();
    },
  };
}

/** How often a serving Mesh releases the workspaces of runs that died. */
export const REAP_INTERVAL_MS = 30_000;

/** How often a serving Mesh ends the runs whose question expired unanswered. */
export const QUESTION_SWEEP_INTERVAL_MS = 5_000;

/**
 * Runs `sweep` now and then every `intervalMs`, never two at once; a failure is logged under
 * `name` and the next sweep comes on schedule.
 */
function startSweeper(
  name: string,
  intervalMs: number,
  log: (line: string) => void,
  sweep: () => Promise<void>,
): { stop(): void } {
  let running = false;
  const once = async () => {
    if (running) return;
    running = true;
    try {
      await sweep();
    } catch (error) {
      log(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      running = false;
    }
  };
  void once();
  const timer = setInterval(() => void once(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
