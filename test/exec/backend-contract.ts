import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  type ProvisionSpec,
  type Workspace,
  type WorkspaceBackend,
} from '../../src/exec/backend.ts';
import { WorkspaceFileError } from '../../src/tool/workspace.ts';

/** What a backend's test file hands the contract: the backend, spec overrides, its teardown. */
export interface ContractSubject {
  readonly backend: WorkspaceBackend;
  /** Merged into every spec the suite provisions (an image, limits the backend needs). */
  readonly spec?: Partial<ProvisionSpec>;
  cleanup(): Promise<void>;
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Expects `promise` to reject with a `WorkspaceFileError` of `reason` (matched on the code). */
async function rejectsWith(promise: Promise<unknown>, reason: WorkspaceFileError['reason']) {
  await expect(promise).rejects.toMatchObject({ code: WorkspaceFileError.code, reason });
}

/**
 * The one suite every `WorkspaceBackend` passes (decision: one contract suite per interface, run
 * against every implementation). It says nothing of how a backend isolates or where it runs:
 * only what a handler can observe through `Workspace`. Paths in commands are relative to the
 * working directory, because where the root appears on a host differs between backends.
 */
export function describeWorkspaceBackendContract(
  name: string,
  makeBackend: () => Promise<ContractSubject>,
): void {
  describe(`${name}: the WorkspaceBackend contract`, () => {
    let subject: ContractSubject;
    let ws: Workspace;
    const held: Workspace[] = [];

    const specOf = (overrides: Partial<ProvisionSpec> = {}): ProvisionSpec => ({
      workspaceId: randomUUID(),
      runId: randomUUID(),
      agentId: 'contract-agent',
      egress: [],
      credentials: {},
      limits: DEFAULT_LIMITS,
      ...subject.spec,
      ...overrides,
    });
    const provision = async (overrides: Partial<ProvisionSpec> = {}) => {
      const workspace = await subject.backend.provision(specOf(overrides));
      held.push(workspace);
      return workspace;
    };
    const run = (command: string, extra: { cwd?: string; env?: Record<string, string> } = {}) =>
      ws.exec({ command, timeoutMs: 20_000, ...extra });

    beforeAll(async () => {
      subject = await makeBackend();
      ws = await provision({ credentials: { MESH_SPEC_TOKEN: 'from-the-spec' } });
    });
    afterAll(async () => {
      await Promise.allSettled(held.map((w) => w.release()));
      await subject?.backend.close();
      await subject?.cleanup();
    });

    it('provisions a workspace named by the spec, with an absolute root', () => {
      expect(ws.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(ws.externalId.length).toBeGreaterThan(0);
      expect(ws.root.startsWith('/')).toBe(true);
    });

    it('runs a command: stdout and exit 0', async () => {
      const result = await run('echo hello');
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, egressRefused: [] });
      expect(text(result.stdout)).toBe('hello\n');
      expect(text(result.stderr)).toBe('');
    });

    it('returns a non-zero exit as a result, with both streams', async () => {
      const result = await run('echo out; echo err >&2; exit 3');
      expect(result.exitCode).toBe(3);
      expect(result.timedOut).toBe(false);
      expect(text(result.stdout)).toBe('out\n');
      expect(text(result.stderr)).toBe('err\n');
    });

    it('captures stderr of a command that succeeds', async () => {
      const result = await run('echo warning >&2');
      expect(result.exitCode).toBe(0);
      expect(text(result.stderr)).toBe('warning\n');
    });

    it('runs in the working directory given relative to the root', async () => {
      await ws.writeFile('sub/deeper/marker.txt', new TextEncoder().encode('here'));
      const result = await run('cat marker.txt; echo; pwd', { cwd: 'sub/deeper' });
      expect(result.exitCode).toBe(0);
      const [marker, pwd] = text(result.stdout).split('\n');
      expect(marker).toBe('here');
      expect(pwd?.endsWith('/sub/deeper')).toBe(true);
    });

    it('runs in the root when no working directory is given', async () => {
      await ws.writeFile('at-root.txt', new TextEncoder().encode('root'));
      expect(text((await run('cat at-root.txt')).stdout)).toBe('root');
    });

    it('passes the request environment to the command', async () => {
      const result = await run('printf %s "$MESH_CONTRACT_VAR"', {
        env: { MESH_CONTRACT_VAR: 'a value with spaces' },
      });
      expect(text(result.stdout)).toBe('a value with spaces');
    });

    it('gives every command the credentials of the spec and those granted later', async () => {
      expect(text((await run('printf %s "$MESH_SPEC_TOKEN"')).stdout)).toBe('from-the-spec');
      expect(text((await run('printf %s "${MESH_GRANTED:-unset}"')).stdout)).toBe('unset');
      await ws.grant({ MESH_GRANTED: 'granted-value-7d1c' });
      expect(text((await run('printf %s "$MESH_GRANTED"')).stdout)).toBe('granted-value-7d1c');
      expect(text((await run('printf %s "$MESH_GRANTED"')).stdout)).toBe('granted-value-7d1c');
      // Granted credentials live in the environment, not in the workspace's files.
      const grep = await run('grep -rl granted-value-7d1c . || echo none');
      expect(text(grep.stdout)).toBe('none\n');
    });

    it('kills a command at its deadline: timedOut, no exit code', async () => {
      const started = Date.now();
      const result = await ws.exec({ command: 'sleep 10; echo late', timeoutMs: 400 });
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).toBeNull();
      expect(text(result.stdout)).not.toContain('late');
      expect(Date.now() - started).toBeLessThan(8_000);
      // The workspace is usable after a kill.
      expect((await run('echo alive')).exitCode).toBe(0);
    });

    it('streams output while the command runs, when the backend streams', async (ctx) => {
      if (!subject.backend.capabilities.streamingExec) ctx.skip();
      const chunks: { stream: string; at: number; text: string }[] = [];
      const result = await ws.exec({
        command: 'echo one; sleep 0.5; echo two >&2',
        timeoutMs: 20_000,
        onOutput: (stream, chunk) => chunks.push({ stream, at: Date.now(), text: text(chunk) }),
      });
      const ended = Date.now();
      expect(
        chunks
          .filter((c) => c.stream === 'stdout')
          .map((c) => c.text)
          .join(''),
      ).toBe('one\n');
      expect(
        chunks
          .filter((c) => c.stream === 'stderr')
          .map((c) => c.text)
          .join(''),
      ).toBe('two\n');
      expect(ended - chunks[0]!.at).toBeGreaterThanOrEqual(300);
      expect(text(result.stdout)).toBe('one\n');
      expect(text(result.stderr)).toBe('two\n');
    });

    it('writes and reads back bytes exactly, making parent folders', async () => {
      const bytes = new Uint8Array(512).map((_, i) => (i * 7) % 256);
      await ws.writeFile('nested/a/b/c/data.bin', bytes);
      expect(Array.from(await ws.readFile('nested/a/b/c/data.bin', 1024))).toEqual(
        Array.from(bytes),
      );
      const listed = await run('wc -c < nested/a/b/c/data.bin');
      expect(text(listed.stdout).trim()).toBe('512');
    });

    it('reads a file a command wrote, and a command reads a written file', async () => {
      await run('printf made-by-command > from-command.txt');
      expect(text(await ws.readFile('from-command.txt', 100))).toBe('made-by-command');
      await ws.writeFile('./from-handler.txt', new TextEncoder().encode('made-by-handler'));
      expect(text((await run('cat from-handler.txt')).stdout)).toBe('made-by-handler');
    });

    it('refuses a missing file as not_found and a folder as not_a_file', async () => {
      await rejectsWith(ws.readFile('no/such/file.txt', 100), 'not_found');
      await rejectsWith(ws.readFile('nested', 100), 'not_a_file');
    });

    it('refuses paths that leave the root', async () => {
      for (const path of ['../../etc/passwd', '/etc/passwd', 'sub/../../../etc/passwd']) {
        await rejectsWith(ws.readFile(path, 100_000), 'outside_root');
        await rejectsWith(ws.writeFile(path, new Uint8Array([1])), 'outside_root');
      }
      await rejectsWith(
        ws.exec({ command: 'true', cwd: '../..', timeoutMs: 5_000 }),
        'outside_root',
      );
    });

    it('accepts an absolute path inside the root', async () => {
      await ws.writeFile(`${ws.root}/absolute.txt`, new TextEncoder().encode('abs'));
      expect(text(await ws.readFile('absolute.txt', 10))).toBe('abs');
    });

    it('refuses a file over maxBytes as too_large', async () => {
      await ws.writeFile('big.txt', new Uint8Array(100).fill(65));
      await rejectsWith(ws.readFile('big.txt', 99), 'too_large');
      expect((await ws.readFile('big.txt', 100)).byteLength).toBe(100);
    });

    it('meters the compute of a command', async () => {
      const result = await run('sleep 0.2');
      expect(result.computeMs).toBeGreaterThan(0);
    });

    it('keeps files between commands', async () => {
      await run('echo persisted > state.txt');
      expect(text((await run('cat state.txt')).stdout)).toBe('persisted\n');
    });

    it('keeps two workspaces apart', async () => {
      const other = await provision();
      expect(other.externalId).not.toBe(ws.externalId);
      await ws.writeFile('only-in-first.txt', new TextEncoder().encode('first'));
      await rejectsWith(other.readFile('only-in-first.txt', 100), 'not_found');
      const probe = await other.exec({ command: 'test -e only-in-first.txt', timeoutMs: 5_000 });
      expect(probe.exitCode).toBe(1);
      expect(
        text(
          (await other.exec({ command: 'printf %s "${MESH_GRANTED:-unset}"', timeoutMs: 5_000 }))
            .stdout,
        ),
      ).toBe('unset');
    });

    it('releases idempotently, and releaseById of a released workspace resolves', async () => {
      const doomed = await provision();
      await doomed.release();
      await doomed.release();
      await subject.backend.releaseById(doomed.externalId);
    });
  });
}
