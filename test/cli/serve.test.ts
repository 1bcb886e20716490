import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshIn, removeMeshHome, serveIn } from '../support/cli.ts';

const home = freshMeshHome('mesh-serve-');
const mesh = meshIn(home);
const serve = (...args: string[]) => serveIn(home, ...args);

describe('mesh serve on the embedded database', () => {
  afterAll(() => removeMeshHome(home));

  it('prints the URL and a first operator token, serves the demo, and answers the CLI beside it', async () => {
    const first = serve('--demo', '--port', '0');
    try {
      const urlLine = await first.waitFor(/^URL: /);
      const tokenLine = await first.waitFor(/^Operator token: /);
      expect(urlLine).toMatch(/^URL: http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(tokenLine).toMatch(/^Operator token: mesh_op_[A-Za-z0-9_-]{43}$/);
      const url = urlLine.slice('URL: '.length);
      const token = tokenLine.slice('Operator token: '.length);

      // The UI sends a browser to log in; the API answers the token.
      const page = await fetch(url, { redirect: 'manual' });
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toBe('/login');
      expect((await fetch(`${url}login`)).status).toBe(200);
      const reply = await fetch(`${url}api/agents/demo/messages?wait=60`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ body: 'remember that the deploy window is Friday' }),
      });
      expect(await reply.json()).toMatchObject({
        status: 'succeeded',
        reply: 'Noted: the deploy window is Friday.',
      });

      // The embedded database is this server's: a CLI beside it sends its work to the server.
      const listed = await mesh('agents', 'list');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^demo {2}[0-9a-f-]{36} {2}/m);
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exited).toBe(0);
    expect(existsSync(join(home, 'mesh.lock'))).toBe(false);

    // A second start shows no token (only its hash was kept) and does not recreate the demo.
    const second = serve('--demo', '--port', '0');
    try {
      expect(await second.waitFor(/^Operator token: /)).toBe(
        'Operator token: shown once when it was created; mint another with mesh serve --new-token',
      );
      expect(second.lines.some((l) => l.includes('Created the demo agent'))).toBe(false);
    } finally {
      second.child.kill('SIGTERM');
    }
    expect(await second.exited).toBe(0);

    const tokens = await mesh('tokens', 'list', '--json');
    expect((JSON.parse(tokens.stdout) as { tokens: unknown[] }).tokens).toHaveLength(1);
    expect(tokens.stdout).not.toContain('mesh_op_');
  }, 120_000);
});
