import { meshVersion } from '../app/version.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openMesh, meshOptionsFromEnv, type Mesh } from '../app/mesh.ts';
import { createOperatorToken, ensureFirstOperatorToken } from '../app/operator-auth.ts';
import { addModelProvider, createAgent } from '../app/operator.ts';
import { operatorCallDriver } from '../app/operator-call.ts';
import { turnEnvironment } from '../app/turns.ts';
import { Worker } from '../run/worker.ts';
import { startServer } from '../server/server.ts';
import { findAgent } from '../store/agents.ts';
import { resolveMeshHome } from '../store/connect.ts';
import { recordServedUrl } from '../store/home-lock.ts';
import { findModelProvider } from '../store/model-providers.ts';
import { turnDriver } from '../turn/engine.ts';
import { UsageError, type CliIo, type Command } from './command.ts';

export const DEFAULT_PORT = 8420;

const USAGE = `Usage:
  mesh serve [--port P] [--host H] [--demo] [--new-token]

Serves the web UI and the JSON API (described at /api/openapi.json), and drives runs that
were left unfinished. Prints the URL, and on first start an operator token (shown once; only
its hash is stored).
  --port P       port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H       address to bind (default 127.0.0.1)
  --demo         create a demo agent with a scripted model on first run, so it works offline
  --new-token    mint another operator token and print it once`;

const DEMO_SCRIPT = new URL('../../examples/demo-script.json', import.meta.url);

/** The demo agent and its scripted provider, created when missing. */
export async function ensureDemo(mesh: Mesh): Promise<boolean> {
  if (await findAgent(mesh.db, 'demo')) return false;
  if (!(await findModelProvider(mesh.db, 'demo'))) {
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

/** The worker that resumes runs a crash left behind: turns and operator calls alike. */
export function meshWorker(mesh: Mesh, log: (line: string) => void): Worker {
  return new Worker({
    db: mesh.db,
    ledger: mesh.ledger,
    drivers: [turnDriver(turnEnvironment(mesh)), operatorCallDriver(mesh)],
    log,
  });
}

async function serve(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      demo: { type: 'boolean', default: false },
      'new-token': { type: 'boolean', default: false },
    },
  });
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--port must be an integer from 0 to 65535');

  const options = meshOptionsFromEnv();
  const mesh = await openMesh(options);
  const log = (line: string) => io.out(line);
  let server;
  try {
    if (values.demo && (await ensureDemo(mesh))) log('Created the demo agent (scripted model).');
    const first = await ensureFirstOperatorToken(mesh.db);
    const minted = values['new-token']
      ? await createOperatorToken(mesh.db, 'mesh serve')
      : undefined;
    try {
      server = await startServer(mesh, { host: values.host, port, log, version: meshVersion() });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        io.err(`mesh serve: ${values.host}:${port} is in use; pass --port to choose another`);
        await mesh.close();
        return 1;
      }
      throw error;
    }
    if (!options.databaseUrl) recordServedUrl(options.meshHome ?? resolveMeshHome(), server.url);
    io.out(`URL: ${server.url}`);
    const token = minted?.token ?? first?.token;
    io.out(
      token
        ? `Operator token: ${token}`
        : 'Operator token: shown once when it was created; mint another with mesh serve --new-token',
    );
  } catch (error) {
    await mesh.close();
    throw error;
  }

  const worker = meshWorker(mesh, log);
  worker.start();
  const running = server;
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log('Stopping: finishing requests, handing back run leases.');
  await running.close();
  await worker.stop();
  await mesh.close();
  return 0;
}

/** `mesh serve`: the web UI, the JSON API and a worker, in one process. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the web UI and JSON API, and drive runs',
  usage: USAGE,
  run: serve,
};
