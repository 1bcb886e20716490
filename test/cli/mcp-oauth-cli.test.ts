import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshMeshHome,
  meshBin,
  meshEnv,
  meshIn,
  removeMeshHome,
  serveIn,
  type ServeProcess,
} from '../support/cli.ts';
import { startFakeOAuth, type FakeOAuth } from '../support/fake-oauth.ts';

/*
 * The CLI beside a running `mesh serve`: `mesh mcp oauth` prints the authorization URL, the test
 * plays the operator's browser (the fake authorization server approves at once and redirects to
 * the server's callback), and the command reports the connection when the server has made it.
 */
describe('mesh mcp oauth and request timeouts from the CLI', () => {
  const home = freshMeshHome('mesh-oauth-cli-');
  const mesh = meshIn(home);
  let oauth: FakeOAuth;
  let serve: ServeProcess;
  let url: string;
  let closed = false;

  beforeAll(async () => {
    oauth = await startFakeOAuth({ accessTokenTtl: 3600 });
    serve = serveIn(home, '--port', '0');
    url = (await serve.waitFor(/^URL: /)).slice('URL: '.length);
  }, 60_000);
  afterAll(async () => {
    await serve.stop();
    if (!closed) await oauth.close();
    await removeMeshHome(home);
  });

  it('sets a per-server request timeout, and refuses one out of range', async () => {
    const added = await mesh(
      'mcp',
      'add',
      'secure',
      oauth.mcpUrl,
      '--allow-loopback-http',
      '--timeout',
      '5',
    );
    expect(added.stdout).toContain('requests time out after 5 s');
    expect((await mesh('mcp', 'list')).stdout).toContain('timeout 5 s');
    const refused = await mesh('mcp', 'timeout', 'secure', '0');
    expect(refused.code).not.toBe(0);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('TIMEOUT_SECONDS must be >= 1');
    expect((await mesh('mcp', 'timeout', 'secure', '90')).stdout).toContain('after 90 s');
    const listed = JSON.parse((await mesh('mcp', 'list', '--json')).stdout) as {
      providers: { timeout_seconds: number }[];
    };
    expect(listed.providers[0]?.timeout_seconds).toBe(90);
  });

  it('connects with OAuth: prints the authorization URL and finishes through the server callback', async () => {
    expect((await mesh('agents', 'create', 'ada')).code).toBe(0);
    const child = spawn(
      process.execPath,
      [meshBin, 'mcp', 'oauth', '--agent', 'ada', '--provider', 'secure', '--server', url],
      { env: meshEnv(home), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const authorizationUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith(oauth.issuer));
        if (line) resolve(line);
      });
      void exited.then(() => reject(new Error(`mesh mcp oauth exited: ${out}${err}`)));
    });
    expect(new URL(authorizationUrl).searchParams.get('code_challenge_method')).toBe('S256');

    // The operator's browser: the authorization server approves and sends it to the callback.
    const approved = await fetch(authorizationUrl, { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location') ?? '');
    expect(callback.origin).toBe(new URL(url).origin);
    const landed = await fetch(callback, { redirect: 'manual' });
    expect(landed.status).toBe(303);

    expect(await exited).toBe(0);
    expect(out).toMatch(/Connected ada to secure with OAuth: \d+ tools\./);
    const connections = JSON.parse(
      (await mesh('mcp', 'list', '--agent', 'ada', '--json')).stdout,
    ) as { connections: { provider: string; auth: string }[] };
    expect(connections.connections).toEqual([
      expect.objectContaining({ provider: 'secure', auth: 'oauth' }),
    ]);
    for (const secret of oauth.issuedSecrets) expect(out + err).not.toContain(secret);

    // The server goes away: a check fails, and the connection shows when and why.
    await oauth.close();
    closed = true;
    const refresh = await mesh(
      'mcp',
      'catalog',
      '--agent',
      'ada',
      '--provider',
      'secure',
      '--refresh',
    );
    expect(refresh.code).not.toBe(0);
    expect((await mesh('mcp', 'list', '--agent', 'ada')).stdout).toMatch(
      /last check failed at \d{4}-\d\d-\d\dT[\d:.]+Z: could not connect: /,
    );
  }, 60_000);
});
