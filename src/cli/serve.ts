import { parseArgs } from 'node:util';
import { meshOptionsFromEnv, openMesh } from '../app/compose.ts';
import { serveMesh, type Serving } from '../app/serve.ts';
import { parseTrustedProxies, type TrustedProxies } from '../server/client-address.ts';
import { startServer } from '../server/server.ts';
import { listenOnSocket } from '../server/socket-server.ts';
import { UsageError, type CommandBody } from './command.ts';
import { DEFAULT_PORT } from './serve-usage.ts';

/**
 * The reverse proxies in front of this server (`MESH_TRUSTED_PROXIES`: addresses or CIDR ranges,
 * comma-separated), whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed.
 */
function trustedProxiesFromEnv(): TrustedProxies {
  try {
    return parseTrustedProxies(process.env['MESH_TRUSTED_PROXIES']);
  } catch (error) {
    throw new UsageError(`MESH_TRUSTED_PROXIES: ${(error as Error).message}`);
  }
}

/** `mesh serve`: the web UI, the JSON API, the CLI's socket and a worker, in one process. */
export const serveCommand: CommandBody = async (args, io) => {
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
  const trustedProxies = trustedProxiesFromEnv();

  // Listen for the stop signals before anything is announced: whoever reads the URL may stop the
  // server at once, and a signal without a listener would kill it mid-write instead.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });

  const options = meshOptionsFromEnv();
  const mesh = await openMesh({ ...options, onProgress: (line) => io.out(line) });
  const log = (line: string) => io.out(line);
  let serving: Serving;
  try {
    serving = await serveMesh(mesh, {
      http: (m, http) => startServer(m, { ...http, trustedProxies }),
      socket: listenOnSocket,
      host: values.host,
      port,
      demo: values.demo,
      newToken: values['new-token'],
      ...(options.databaseUrl ? {} : { meshHome: options.meshHome }),
      log,
    });
  } catch (error) {
    await mesh.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      io.err(`mesh serve: ${values.host}:${port} is in use; pass --port to choose another`);
      return 1;
    }
    throw error;
  }
  io.out(`URL: ${serving.url}`);
  io.out(
    serving.token
      ? `Operator token: ${serving.token}`
      : 'Operator token: shown once when it was created; mint another with mesh serve --new-token',
  );
  await stopped;
  log('Stopping: finishing requests, handing back run leases.');
  await serving.close();
  await mesh.close();
  return 0;
};
