import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  DEFAULT_LIMITS,
  type ProvisionSpec,
} from '../../src/exec/backend.ts';
import { e2bBackend, e2bNetwork } from '../../src/exec/backends/e2b.ts';
import { WorkspaceFileError } from '../../src/tool/workspace.ts';
import { startFakeE2b, type FakeE2b } from '../support/e2b-fake.ts';
import { describeWorkspaceBackendContract } from './backend-contract.ts';

describeWorkspaceBackendContract('e2b (loopback fake)', async () => {
  const fake = await startFakeE2b();
  return {
    backend: e2bBackend({ apiKey: fake.apiKey, apiUrl: fake.apiUrl, sandboxUrl: fake.sandboxUrl }),
    cleanup: () => fake.close(),
  };
});

const spec = (overrides: Partial<ProvisionSpec> = {}): ProvisionSpec => ({
  workspaceId: randomUUID(),
  runId: randomUUID(),
  agentId: 'e2b-agent',
  egress: [],
  credentials: {},
  limits: DEFAULT_LIMITS,
  ...overrides,
});

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('e2b backend: what E2B itself is asked and refuses', () => {
  let fake: FakeE2b;
  beforeAll(async () => {
    fake = await startFakeE2b();
  });
  afterAll(async () => {
    await fake.close();
  });
  const backend = (apiKey = fake.apiKey) =>
    e2bBackend({ apiKey, apiUrl: fake.apiUrl, sandboxUrl: fake.sandboxUrl });

  it('reports a wrong API key as backend unavailable, naming the fix and never the key', async () => {
    const wrongKey = `e2b_wrong_${randomUUID()}`;
    const error: unknown = await backend(wrongKey)
      .provision(spec())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as BackendUnavailableError).code).toBe('workspace_backend_unavailable');
    const message = (error as Error).message;
    expect(message).toContain('API key');
    expect(message).toContain('401');
    expect(message).not.toContain(wrongKey);
    expect(JSON.stringify(error)).not.toContain(wrongKey);
    expect(fake.running()).toEqual([]);
  });

  it('reports an unreachable API as backend unavailable, naming where and what to check', async () => {
    const port = await closedPort();
    const apiKey = `e2b_${randomUUID()}`;
    const down = e2bBackend({
      apiKey,
      apiUrl: `http://127.0.0.1:${port}`,
      sandboxUrl: `http://127.0.0.1:${port}`,
    });
    const error: unknown = await down.provision(spec()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain(`cannot reach E2B at http://127.0.0.1:${port}`);
    expect(message).toContain('apiUrl');
    expect(message).not.toContain(apiKey);
  });

  it('maps the egress allowlist onto the create request: deny all, allow the hosts', async () => {
    const workspace = await backend().provision(
      spec({
        egress: [{ host: 'api.github.com', port: 443 }, { host: 'pypi.org' }, { host: 'PyPI.org' }],
      }),
    );
    try {
      const body = fake.createRequests.at(-1)!;
      expect(body.network).toEqual({
        allowOut: ['api.github.com', 'pypi.org'],
        denyOut: ['0.0.0.0/0'],
      });
      expect(body.templateID).toBe('base');
      expect(body.timeout).toBe(DEFAULT_LIMITS.idleTimeoutMs / 1000);
      expect(body.metadata).toMatchObject({
        meshWorkspaceId: workspace.id,
        meshAgentId: 'e2b-agent',
      });
    } finally {
      await workspace.release();
    }
  });

  it('denies all egress when the allowlist is empty', () => {
    expect(e2bNetwork([])).toEqual({ denyOut: ['0.0.0.0/0'] });
  });

  it('sends credentials with each command, never in the create request', async () => {
    const workspace = await backend().provision(
      spec({ credentials: { MESH_TOKEN: 'secret-7f3a' }, image: 'mesh-python' }),
    );
    try {
      const body = fake.createRequests.at(-1)!;
      expect(body.templateID).toBe('mesh-python');
      expect(JSON.stringify(body)).not.toContain('secret-7f3a');
      const result = await workspace.exec({ command: 'printf %s "$MESH_TOKEN"', timeoutMs: 5_000 });
      expect(new TextDecoder().decode(result.stdout)).toBe('secret-7f3a');
    } finally {
      await workspace.release();
    }
  });

  it('extends the sandbox timeout to cover a command longer than the idle window', async () => {
    const workspace = await backend().provision(
      spec({ limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 60_000 } }),
    );
    try {
      await workspace.exec({ command: 'true', timeoutMs: 120_000 });
      expect(fake.timeoutRequests).toContainEqual({
        sandboxId: workspace.externalId,
        timeout: 150,
      });
    } finally {
      await workspace.release();
    }
  });

  // Not (yet) in the shared contract: the local backend rejects an aborted command and reports
  // a write over a folder as `io`; which one the contract should hold is an open question.
  it('answers an aborted command as a result: no exit code, not timed out', async () => {
    const workspace = await backend().provision(spec());
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const result = await workspace.exec({
        command: 'sleep 10; echo late',
        timeoutMs: 20_000,
        signal: controller.signal,
      });
      expect(result).toMatchObject({ exitCode: null, timedOut: false });
      expect(new TextDecoder().decode(result.stdout)).not.toContain('late');
    } finally {
      await workspace.release();
    }
  });

  it('refuses to write over a folder, or under a file, as not_a_file', async () => {
    const workspace = await backend().provision(spec());
    try {
      await workspace.writeFile('folder/inside.txt', new Uint8Array([1]));
      for (const path of ['folder', 'folder/inside.txt/below.txt']) {
        await expect(workspace.writeFile(path, new Uint8Array([2]))).rejects.toMatchObject({
          code: WorkspaceFileError.code,
          reason: 'not_a_file',
        });
      }
    } finally {
      await workspace.release();
    }
  });

  it('releaseById kills the sandbox; a workspace whose sandbox is gone reports the backend', async () => {
    const b = backend();
    const workspace = await b.provision(spec());
    expect(fake.running()).toContain(workspace.externalId);
    await b.releaseById(workspace.externalId);
    expect(fake.running()).not.toContain(workspace.externalId);
    await b.releaseById(workspace.externalId);
    const error: unknown = await workspace
      .exec({ command: 'true', timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
  });
});
