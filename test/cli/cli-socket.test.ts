import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectToServer } from '../../src/cli/socket-client.ts';
import type { JsonObject } from '../../src/model/json.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import {
  listConnectionsOperation,
  connectOperation,
} from '../../src/app/mcp/connection-operations.ts';
import {
  addMcpProviderOperation,
  listMcpProvidersOperation,
} from '../../src/app/mcp/provider-operations.ts';
import { cliTarget } from '../../src/app/cli-target.ts';
import { invokeFromCli } from '../../src/cli/operation-client.ts';
import { operationRequest } from '../../src/app/operations/http-layout.ts';
import { invokeOperation, type AnyOperation } from '../../src/app/operations/operation.ts';
import { showRunOperation } from '../../src/app/runs/operations.ts';
import { listenOnSocket, type SocketServer } from '../../src/server/socket-server.ts';
import { freshPglite } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * The CLI's socket beside a running server, at its edges: a socket a dead server left behind, a
 * socket or home others could use, the same refusal whether an operation runs here or in the
 * server, and a secret the CLI sends that the server never writes to its log.
 */

const CANARY = 'sk-canary-7f3a9d0e5b1c';

/** An owner-only socket file with nobody listening: what a SIGKILLed server leaves behind. */
function staleSocket(path: string): void {
  const script = `process.umask(0o177); require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
  spawnSync(process.execPath, ['-e', script]);
  if (!lstatSync(path).isSocket()) throw new Error('no stale socket was left behind');
}

async function failure(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { ...(e.code === undefined ? {} : { code: e.code }), message: e.message };
  }
  throw new Error('expected a refusal');
}

describe('the CLI socket at its edges', () => {
  let mesh: Mesh;
  let home: string;
  let listening: SocketServer | undefined;
  const log: string[] = [];
  beforeAll(async () => {
    mesh = assembleMesh(await freshPglite(), testInstanceKey());
  });
  afterAll(async () => {
    await mesh.close();
  });
  afterEach(async () => {
    await listening?.close();
    listening = undefined;
    rmSync(home, { recursive: true, force: true });
  });
  const fresh = () => {
    home = mkdtempSync(join(tmpdir(), 'mesh-socket-'));
    return join(home, 'mesh.sock');
  };

  it('takes over a socket a dead server left behind, and a CLI reaches the new server on it', async () => {
    const path = fresh();
    staleSocket(path);
    expect((await failure(connectToServer(path))).code).toBe('ECONNREFUSED');
    listening = await listenOnSocket(mesh, path, {
      log: (line) => log.push(line),
      version: 'test',
    });
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    const client = await connectToServer(path);
    try {
      expect((await client.request('GET', '/api/agents')).body).toEqual({ agents: [] });
    } finally {
      client.close();
    }
  });

  it('never removes a file that is not a socket, and listens in no home others can write', async () => {
    const path = fresh();
    writeFileSync(path, 'not a socket');
    expect(await failure(listenOnSocket(mesh, path, { log: () => {}, version: 'test' }))).toEqual({
      code: 'cli_socket_unsafe',
      message: `${path} exists and is not a socket; remove it`,
    });
    expect(readFileSync(path, 'utf8')).toBe('not a socket');
    rmSync(path);
    chmodSync(home, 0o777);
    expect(await failure(listenOnSocket(mesh, path, { log: () => {}, version: 'test' }))).toEqual({
      code: 'cli_socket_unsafe',
      message: `${home} is writable by others (mode 777)`,
    });
  });

  it('refuses to send anything over a socket that is not owner-only', async () => {
    const path = fresh();
    listening = await listenOnSocket(mesh, path, { log: () => {}, version: 'test' });
    chmodSync(path, 0o660);
    expect(await failure(connectToServer(path))).toEqual({
      code: 'cli_socket_unsafe',
      message: `a server holds this home, but its socket is not safe to use: ${path} is not owner-only (mode 660)`,
    });
  });

  it('names a live holder that does not answer on its socket, instead of opening its database', async () => {
    const path = fresh();
    staleSocket(path);
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const pid = holder.pid ?? 0;
      writeFileSync(
        join(home, 'mesh.lock'),
        JSON.stringify({ pid, url: 'http://127.0.0.1:1/', socket: 'mesh.sock' }),
      );
      const env = { MESH_HOME: home };
      expect(cliTarget(env)).toMatchObject({ kind: 'server', socket: path });
      expect(await failure(invokeFromCli(listMcpProvidersOperation, {}, env))).toEqual({
        code: 'home_locked',
        message: `the embedded database is in use by process ${pid} (serving http://127.0.0.1:1/), which is not answering on its socket; try again, or stop it first`,
      });
    } finally {
      holder.kill('SIGKILL');
    }
    // Once the holder is gone its lock no longer counts: the work would run in this process.
    await new Promise((resolve) => holder.once('exit', resolve));
    expect(cliTarget({ MESH_HOME: home })).toEqual({ kind: 'local' });
  });

  it('refuses with the same code and words in the server as in this process, secrets unlogged', async () => {
    const path = fresh();
    log.length = 0;
    listening = await listenOnSocket(mesh, path, {
      log: (line) => log.push(line),
      version: 'test',
    });
    const client = await connectToServer(path);
    const refusals: [AnyOperation, Record<string, unknown>][] = [
      [listConnectionsOperation, { agent: 'ghost' }],
      [connectOperation, { agent: 'ghost', provider: 'x', value: CANARY }],
      [addMcpProviderOperation, { slug: 'ok', url: `https://${CANARY}@x.test/` }],
      [addMcpProviderOperation, { slug: 'ok', url: `ftp://${CANARY}.test/` }],
      [showRunOperation, { run: 'not-a-run' }],
    ];
    try {
      for (const [op, input] of refusals) {
        const local = await failure(invokeOperation(mesh, op, input, { actor: 'test' }));
        const request = operationRequest(op, input);
        const remote = await failure(
          client.request(request.method, request.target, request.body as JsonObject | undefined),
        );
        expect(local.code, op.name).toMatch(/^[a-z_]+$/);
        expect({ code: remote.code, message: remote.message }).toEqual({
          code: local.code,
          message: local.message.replace('`input.run`', '`path.run`'),
        });
        expect(JSON.stringify(remote)).not.toContain(CANARY);
      }
    } finally {
      client.close();
    }
    expect(log.filter((line) => line.includes(' error '))).toEqual([]);
    expect(log.join('\n')).not.toContain(CANARY);
  });
});
