import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cloneUrl,
  gitCloneCommand,
  gitSetupCommand,
  noreplyEmail,
  workspaceGrant,
} from '../../tools/github/checkout-commands.ts';
import {
  isolatedGitEnv,
  startGitHttpServer,
  type GitHttpServer,
} from '../support/git-http-server.ts';

const run = promisify(execFile);
const TOKEN = 'ghp_fakeGitServerToken0123456789';

/** Runs a command line the way a workspace does (`/bin/sh -c`), in `cwd` with `env`. */
async function sh(command: string, cwd: string, env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await run('/bin/sh', ['-c', command], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the git smart-HTTP fake, driven by real git and the checkout commands', () => {
  let server: GitHttpServer;
  let home: string;
  const as = { name: 'Mesh Agent', email: noreplyEmail(4242, 'mesh-agent') };

  beforeAll(async () => {
    server = await startGitHttpServer(TOKEN);
    await server.createRepo('acme/widgets');
    home = await mkdtemp(join(tmpdir(), 'mesh-git-home-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });

  it('clones with the token from GH_TOKEN, commits as the configured identity and pushes a branch', async () => {
    const env = isolatedGitEnv(home, { GH_TOKEN: TOKEN });
    const setup = await sh(gitSetupCommand(server.baseUrl, as), home, env);
    expect(setup).toMatchObject({ code: 0 });
    const url = cloneUrl(server.baseUrl, 'acme/widgets');
    const clone = await sh(gitCloneCommand(url, 'main', 'widgets'), home, env);
    expect(clone.stderr).not.toContain(TOKEN);
    expect(clone.code).toBe(0);
    const dir = join(home, 'widgets');
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('# acme/widgets\n');
    // git first asked without credentials, got 401, and asked the helper.
    expect(server.requests.some((r) => r.status === 401 && r.user === undefined)).toBe(true);
    expect(server.requests.some((r) => r.status === 200 && r.user === 'x-access-token')).toBe(true);

    await writeFile(join(dir, 'CHANGE.md'), 'a change\n');
    const push = await sh(
      'git switch -q -c topic && git add -A && git commit -q -m "add a change" && git push -q -u origin topic',
      dir,
      env,
    );
    expect(push.stderr).not.toContain(TOKEN);
    expect(push.code).toBe(0);
    expect(await server.headOf('acme/widgets', 'topic')).toEqual({
      authorName: 'Mesh Agent',
      authorEmail: '4242+mesh-agent@users.noreply.github.com',
      committerName: 'Mesh Agent',
      committerEmail: '4242+mesh-agent@users.noreply.github.com',
      subject: 'add a change',
    });
    expect(await server.headOf('acme/widgets', 'main')).toMatchObject({
      subject: 'initial commit',
    });
    expect(await server.headOf('acme/widgets', 'nope')).toBeUndefined();
  });

  it('refuses a wrong token and no token, and git says so without echoing the token', async () => {
    const wrongHome = await mkdtemp(join(tmpdir(), 'mesh-git-home-'));
    try {
      const wrong = 'ghp_wrongToken9876543210abcdef';
      const env = isolatedGitEnv(wrongHome, { GH_TOKEN: wrong });
      expect((await sh(gitSetupCommand(server.baseUrl, as), wrongHome, env)).code).toBe(0);
      const url = cloneUrl(server.baseUrl, 'acme/widgets');
      const refused = await sh(gitCloneCommand(url, 'main', 'widgets'), wrongHome, env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/Authentication failed|401/);
      expect(refused.stderr).not.toContain(wrong);

      // No helper at all: git may not prompt, so it fails on the 401.
      const bare = isolatedGitEnv(join(wrongHome, 'elsewhere'));
      const none = await sh(gitCloneCommand(url, 'main', 'other'), wrongHome, bare);
      expect(none.code).not.toBe(0);
    } finally {
      await rm(wrongHome, { recursive: true, force: true });
    }
  });

  it('offers the token only to the git host it was configured for', async () => {
    const otherHome = await mkdtemp(join(tmpdir(), 'mesh-git-home-'));
    const other = await startGitHttpServer(TOKEN);
    try {
      await other.createRepo('acme/widgets');
      const env = isolatedGitEnv(otherHome, { GH_TOKEN: TOKEN });
      await sh(gitSetupCommand(server.baseUrl, as), otherHome, env);
      const clone = await sh(
        gitCloneCommand(cloneUrl(other.baseUrl, 'acme/widgets'), 'main', 'w'),
        otherHome,
        env,
      );
      expect(clone.code).not.toBe(0);
      expect(other.requests.every((r) => r.user === undefined)).toBe(true);
    } finally {
      await other.close();
      await rm(otherHome, { recursive: true, force: true });
    }
  });

  it("grants GH_TOKEN, and gh's enterprise variables for a host that is not github.com", () => {
    expect(workspaceGrant('https://github.com', 't0ken')).toEqual({ GH_TOKEN: 't0ken' });
    expect(workspaceGrant('https://ghe.example.test', 't0ken')).toEqual({
      GH_TOKEN: 't0ken',
      GH_ENTERPRISE_TOKEN: 't0ken',
      GH_HOST: 'ghe.example.test',
    });
  });
});
