import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToServer } from '../../src/cli/socket-client.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { ensureDemo, serveMesh } from '../../src/app/serve.ts';
import { findAgent } from '../../src/app/agents/reads.ts';
import { startServer } from '../../src/server/server.ts';
import { listenOnSocket } from '../../src/server/socket-server.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { freshPglite } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * The production wiring of `mesh serve` (src/app/serve.ts), driven in this process over a test
 * database: the demo set-up, the HTTP server, the CLI's socket and the worker that resumes a run a
 * crash left behind.
 */
describe('serveMesh, the wiring mesh serve runs', () => {
  let mesh: Mesh;
  const home = mkdtempSync(join(tmpdir(), 'mesh-wiring-'));
  beforeAll(async () => {
    mesh = assembleMesh(await freshPglite(), testInstanceKey());
  });
  afterAll(async () => {
    await mesh.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('resumes a crashed turn, serves the API and answers use cases on an owner-only socket', async () => {
    // A chat whose process died mid-turn: its run is running under a lease that has expired.
    expect(await ensureDemo(mesh)).toBe(true);
    const demo = await findAgent(mesh, 'demo');
    if (!demo) throw new Error('the demo agent was not created');
    const { run } = await receiveMessage(mesh.ledger, {
      agentId: demo.id,
      actor: 'test',
      body: 'remember that the deploy window is Friday',
      lease: { owner: 'crashed-chat', leaseMs: 1 },
    });

    const lines: string[] = [];
    const serving = await serveMesh(mesh, {
      http: startServer,
      socket: listenOnSocket,
      host: '127.0.0.1',
      port: 0,
      demo: true,
      newToken: false,
      meshHome: home,
      log: (line) => lines.push(line),
    });
    try {
      // The demo already existed, so it is not created again; the first token is shown once.
      expect(lines).not.toContain('Created the demo agent (scripted model).');
      expect(serving.token).toMatch(/^mesh_op_[A-Za-z0-9_-]{43}$/);

      // The worker claims the run whose lease expired, finishes it, and finds nothing more.
      await serving.idle();
      expect((await mesh.ledger.run(run.id))?.status).toBe('succeeded');
      const steps = await mesh.ledger.steps(run.id);
      const reply = steps.find((s) => s.kind === 'reply');
      expect(reply?.kind === 'reply' ? reply.data.body : undefined).toBe(
        'Noted: the deploy window is Friday.',
      );

      const agents = await fetch(`${serving.url}api/agents`, {
        headers: { authorization: `Bearer ${serving.token ?? ''}` },
      });
      expect(agents.status).toBe(200);
      expect(JSON.stringify(await agents.json())).toContain('"demo"');

      expect(serving.socket).toBe(join(home, 'mesh.sock'));
      expect(statSync(serving.socket ?? '').mode & 0o777).toBe(0o600);
      const client = await connectToServer(serving.socket ?? '');
      try {
        // The API itself, as over TCP: the same body for the same request.
        expect((await client.request('GET', '/api/agents')).body).toEqual(
          JSON.parse(
            JSON.stringify(
              await (
                await fetch(`${serving.url}api/agents`, {
                  headers: { authorization: `Bearer ${serving.token ?? ''}` },
                })
              ).json(),
            ),
          ),
        );
        await expect(client.request('GET', '/api/agents/ghost/mcp')).rejects.toMatchObject({
          code: 'agent_not_found',
          message: 'no agent named "ghost"',
        });
      } finally {
        client.close();
      }
    } finally {
      await serving.close();
    }
  });
});
