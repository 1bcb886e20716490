import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type Workspace, type WorkspaceBackend } from '../../src/exec/backend.ts';
import { localBackend } from '../../src/exec/backends/local.ts';
import { freshPglite } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/*
 * The local backend's isolation, tested from inside a real bubblewrap sandbox: no host file, no
 * instance key, no control-plane port, no network but the allowlist through Mesh's proxy.
 */

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    }),
  );
}

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

describe('the local backend keeps a workspace to itself', () => {
  let backend: WorkspaceBackend;
  let workspace: Workspace;
  let home: string;
  let keyFile: string;
  let allowed: Server;
  let allowedPort: number;
  let other: Server;
  let otherPort: number;
  let mesh: TestServer;
  let meshPort: number;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'mesh-iso-'));
    keyFile = join(home, 'instance.key');
    writeFileSync(keyFile, 'the-instance-key-material\n', { mode: 0o600 });
    allowed = createServer((_req, res) => res.end('allowed-host-answered'));
    other = createServer((_req, res) => res.end('other-host-answered'));
    allowedPort = await listen(allowed);
    otherPort = await listen(other);
    mesh = await startTestServer(await freshPglite());
    meshPort = Number(new URL(mesh.url).port);
    backend = localBackend({ directory: join(home, 'ws') });
    workspace = await backend.provision({
      workspaceId: randomUUID(),
      runId: randomUUID(),
      agentId: randomUUID(),
      egress: [{ host: '127.0.0.1', port: allowedPort }],
      credentials: { GH_TOKEN: 'ghp_isolationtesttoken0001' },
      limits: DEFAULT_LIMITS,
    });
  }, 60_000);

  afterAll(async () => {
    await backend?.close();
    await mesh?.close();
    allowed?.close();
    other?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const run = (command: string) => workspace.exec({ command, timeoutMs: 15_000 });

  it('sees no host file: not the instance key, not MESH_HOME, not the host’s home or /etc', async () => {
    const r = await run(
      `cat ${keyFile}; ls ${home}; ls /root; ls /work; cat /etc/shadow; cat /etc/hostname; ls /home`,
    );
    const all = text(r.stdout) + text(r.stderr);
    expect(all).not.toContain('the-instance-key-material');
    expect(text(r.stdout)).toBe('');
    expect(all).toMatch(/No such file or directory/);
    await expect(workspace.readFile(keyFile, 1000)).rejects.toMatchObject({
      reason: 'outside_root',
    });
    await expect(workspace.readFile('../../../../etc/passwd', 1000)).rejects.toMatchObject({
      reason: 'outside_root',
    });
  });

  it('cannot follow a symlink out of the root through the file verbs', async () => {
    await run(`ln -s ${keyFile} key-link; ln -s / root-link; ln -s /usr/bin/env env-link`);
    // The host's key is not in the sandbox's view at all: the link dangles.
    await expect(workspace.readFile('key-link', 1000)).rejects.toMatchObject({
      reason: 'not_found',
    });
    await expect(workspace.readFile('env-link', 1_000_000)).rejects.toMatchObject({
      reason: 'outside_root',
    });
    await expect(
      workspace.writeFile('root-link/tmp/escape', Buffer.from('x')),
    ).rejects.toMatchObject({ reason: 'outside_root' });
  });

  it('cannot reach PostgreSQL, Mesh’s own API or a host off the allowlist, directly or through the proxy', async () => {
    for (const port of [5432, meshPort, otherPort]) {
      const direct = await run(
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/ ; echo "rc=$?"`,
      );
      expect(text(direct.stdout)).toMatch(/rc=(7|28)/);
      const proxied = await run(`curl -sS -f -m 5 http://127.0.0.1:${port}/ ; echo "rc=$?"`);
      expect(text(proxied.stdout)).toMatch(/rc=(22|56)/);
      expect(proxied.egressRefused).toEqual([`127.0.0.1:${port}`]);
    }
    const https = await run(`curl -sS -m 5 https://example.com/ ; echo "rc=$?"`);
    expect(text(https.stdout)).not.toContain('rc=0');
    expect(https.egressRefused).toEqual(['example.com:443']);
  });

  it('reaches an allowlisted host through the proxy', async () => {
    const r = await run(`curl -sS -f -m 5 http://127.0.0.1:${allowedPort}/`);
    expect(r.exitCode).toBe(0);
    expect(text(r.stdout)).toBe('allowed-host-answered');
    expect(r.egressRefused).toEqual([]);
  });

  it('passes no host environment in: only the granted credential', async () => {
    const r = await run('env');
    const env = text(r.stdout);
    expect(env).toContain('GH_TOKEN=ghp_isolationtesttoken0001');
    expect(env).not.toMatch(/DATABASE_URL|MESH_HOME|VITEST|npm_/);
  });

  it('runs as its own pid namespace: the host’s processes are invisible', async () => {
    const r = await run('ls /proc | grep -E "^[0-9]+$" | wc -l');
    expect(Number(text(r.stdout).trim())).toBeLessThan(10);
  });
});

describe('the local backend holds a workspace to the limits it declares', () => {
  let backend: WorkspaceBackend;
  let workspace: Workspace;
  let home: string;
  const limits = { ...DEFAULT_LIMITS, processes: 40, diskMb: 16, tmpMb: 8 };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'mesh-limits-'));
    backend = localBackend({ directory: join(home, 'ws') });
    workspace = await backend.provision({
      workspaceId: randomUUID(),
      runId: randomUUID(),
      agentId: randomUUID(),
      egress: [],
      credentials: {},
      limits,
    });
  }, 60_000);

  afterAll(async () => {
    await backend?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const run = (command: string) => workspace.exec({ command, timeoutMs: 30_000 });

  it('runs no more processes than its limit', async () => {
    // 100 sleepers started at once (by node, which notes each fork that failed instead of
    // dying of it as a shell does): the ones past the limit fail to fork. Threads count too.
    const script = `
      const { spawn } = require('node:child_process');
      let started = 0, failed = 0, settled = 0;
      for (let i = 0; i < 100; i++) {
        const child = spawn('sleep', ['2']);
        child.on('spawn', () => { started++; done(); });
        child.on('error', () => { failed++; done(); });
      }
      function done() { if (++settled === 100) { console.log(started, failed); process.exit(0); } }
    `;
    const result = await run(`node -e "${script.replaceAll('"', '\\"')}"`);
    const [started = 0, failed = 0] = text(result.stdout).trim().split(' ').map(Number);
    expect(started).toBeGreaterThan(10);
    expect(started).toBeLessThan(limits.processes);
    expect(started + failed).toBe(100);
  });

  it('writes no more to its root or its /tmp than their sizes, and nothing to the host', async () => {
    const root = await run('dd if=/dev/zero of=big bs=1M count=64 2>&1; ls -l big | cut -d" " -f5');
    expect(text(root.stdout)).toMatch(/No space left on device/);
    expect(Number(text(root.stdout).trim().split('\n').pop())).toBeLessThanOrEqual(
      16 * 1024 * 1024,
    );
    const tmp = await run(
      'dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1; ls -l /tmp/big | cut -d" " -f5',
    );
    expect(text(tmp.stdout)).toMatch(/No space left on device/);
    expect(Number(text(tmp.stdout).trim().split('\n').pop())).toBeLessThanOrEqual(8 * 1024 * 1024);
    // /dev/shm is capped like /tmp (it was a tmpfs of half the host's memory), and /dev itself
    // takes no files.
    const shm = await run(
      'dd if=/dev/zero of=/dev/shm/big bs=1M count=64 2>&1; ls -l /dev/shm/big | cut -d" " -f5',
    );
    expect(text(shm.stdout)).toMatch(/No space left on device/);
    expect(Number(text(shm.stdout).trim().split('\n').pop())).toBeLessThanOrEqual(8 * 1024 * 1024);
    const dev = await run(
      'dd if=/dev/zero of=/dev/big bs=1M count=1 2>&1; echo > /dev/null && echo null-ok',
    );
    expect(text(dev.stdout)).toMatch(/Read-only file system/);
    expect(text(dev.stdout)).toContain('null-ok');
    // The workspace still works once a command filled its disk.
    await run('rm -f big /tmp/big /dev/shm/big');
    expect(text((await run('echo ok > f && cat f')).stdout)).toBe('ok\n');
  });
});
