import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { meshIn } from '../support/cli.ts';

const home = mkdtempSync(join(tmpdir(), 'mesh-serve-'));
const mesh = meshIn(home);

/** `mesh serve` as `npm start` runs it, on the embedded database in `home`. */
function serve(...args: string[]): {
  child: ChildProcess;
  lines: string[];
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [join(process.cwd(), 'bin', 'mesh.js'), 'serve', ...args], {
    env: { ...process.env, MESH_HOME: home, DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let buffer = '';
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((x) => x.pattern.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    lines,
    exited,
    waitFor(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then((code) =>
          reject(
            new Error(
              `mesh serve exited (${String(code)}) before ${String(pattern)}:\n${lines.join('\n')}`,
            ),
          ),
        );
      });
    },
  };
}

describe('mesh serve on the embedded database', () => {
  afterAll(() => rmSync(home, { recursive: true, force: true }));

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
      const reply = await fetch(`${url}api/agents/demo/messages`, {
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
    expect(JSON.parse(tokens.stdout)).toHaveLength(1);
    expect(tokens.stdout).not.toContain('mesh_op_');
  }, 120_000);
});
