import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureAgentSecret } from '../../src/app/agents/secrets.ts';
import { requireAgent } from '../../src/app/agents/agents.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { operatorCallDriver } from '../../src/app/runs/operator-call.ts';
import { setAgentConfig } from '../../src/app/packages/packages.ts';
import { agentRegistry } from '../../src/app/packages/policy.ts';
import { workspaceAdmin, grantBackend } from '../../src/app/backends/workspace-admin.ts';
import type { JsonObject } from '../../src/model/json.ts';
import { driveHeldRun } from '../../src/run/held-run.ts';
import { RUN_LEASE_MS } from '../../src/run/lease-heartbeat.ts';
import { observationFrom } from '../../src/run/observation-json.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import type { ObservationStep } from '../../src/run/records.ts';
import type { Observation } from '../../src/tool/observation.ts';
import { testDatabases } from '../support/db.ts';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.ts';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.ts';
import { makeAgent } from '../support/run.ts';
import { testInstanceKey } from '../support/turn.ts';

const TOKEN = 'ghp_workspaceFlowToken0123456789ab';

/**
 * The whole flow through the real local (bubblewrap) backend: checkout_github_repo against the
 * GitHub fake and the git server, a commit and push with workspace_exec, and the pull request.
 * One script run holds all the calls, so they share the run's one workspace.
 */
describe.each(testDatabases())('checkout_github_repo in a local workspace on $name', (database) => {
  let mesh: Mesh;
  let git: GitHttpServer;
  let github: GitHubFake;
  let agentId: string;
  let dispose: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey());
    git = await startGitHttpServer(TOKEN);
    await git.createRepo('acme/widgets', { branch: 'trunk' });
    github = await startGitHubFake();
    github.users.set(TOKEN, { login: 'mesh-agent', id: 4242, name: 'Mesh Agent', email: null });
    github.repos.set('acme/widgets', { defaultBranch: 'trunk' });

    agentId = await makeAgent(opened.db, 'gh');
    const agent = await requireAgent(mesh, agentId);
    await captureAgentSecret(mesh, agent, 'mesh.github', 'credential', TOKEN, 'operator:test');
    await setAgentConfig(mesh, agent, 'mesh.github', 'api_base_url', github.baseUrl);
    await setAgentConfig(mesh, agent, 'mesh.github', 'git_base_url', git.baseUrl);
    await setAgentConfig(mesh, agent, 'mesh.github', 'allow_loopback_http', true);
    await workspaceAdmin
      .add(mesh, {
        name: `local-${randomUUID().slice(0, 8)}`,
        kind: 'local',
        development: true,
      })
      .then((backend) =>
        grantBackend(mesh, {
          agent: agent.name,
          backend: backend.name,
          allowHosts: [new URL(git.baseUrl).host],
          operator: 'ops@test',
        }),
      );
  });
  afterAll(async () => {
    // Closing the Mesh releases its workspaces and closes the database; dispose drops the
    // database the run had of its own.
    await mesh?.close();
    await dispose?.();
    await git?.close();
    await github?.close();
  });

  /** Runs `calls` as one operator script run and returns each call's observation. */
  async function script(calls: { name: string; args: JsonObject }[]): Promise<Observation[]> {
    const offered = await agentRegistry(mesh, agentId, { onCheckFailure: 'last_seen' });
    const owner = `test:${randomUUID().slice(0, 8)}`;
    const run = await mesh.ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'ops@test' },
      budget: { maxToolCalls: calls.length, maxRounds: calls.length },
      checkpoint: scriptCheckpoint(
        calls.map((c) => ({
          id: `op_${randomUUID()}`,
          name: c.name,
          arguments: JSON.stringify(c.args),
        })),
      ),
      lease: { owner, leaseMs: RUN_LEASE_MS },
    });
    await driveHeldRun(mesh.ledger, operatorCallDriver(mesh, offered.registry), run, {
      runId: run.id,
      owner,
      epoch: run.leaseEpoch,
    });
    const steps = await mesh.ledger.steps(run.id);
    return steps
      .filter((s): s is ObservationStep => s.kind === 'observation')
      .map((s) => observationFrom(s.observation));
  }

  it('clones as the agent, pushes a branch it committed as itself, and opens the pull request', async () => {
    const observations = await script([
      { name: 'checkout_github_repo', args: { repo: 'acme/widgets' } },
      {
        name: 'workspace_exec',
        args: {
          command:
            'git switch -c topic && echo change > CHANGE.md && git add -A && git commit -q -m "add a change" && git push -q -u origin topic && git log -1 --format=%ae',
          cwd: 'widgets',
        },
      },
      {
        name: 'create_github_pull_request',
        args: { repo: 'acme/widgets', head: 'topic', title: 'Add a change' },
      },
    ]);
    const [checkout, exec, pr] = observations;
    expect(checkout?.kind, checkout?.text).toBe('result');
    expect(checkout?.data).toEqual({
      repo: 'acme/widgets',
      path: '/workspace/widgets',
      branch: 'trunk',
      default_branch: 'trunk',
      login: 'mesh-agent',
      // Debian's gh, installed by npm test's system packages, is the pinned build.
      gh: { path: '/usr/bin/gh', version: '2.23.0' },
    });
    expect(checkout?.text).toContain('/workspace/widgets');
    expect(checkout?.text).toContain(
      'GitHub CLI: gh 2.23.0 at /usr/bin/gh, checked against its pinned checksum',
    );
    expect(exec?.text, exec?.text).toContain('4242+mesh-agent@users.noreply.github.com');
    for (const o of observations) expect(o.text).not.toContain(TOKEN);
    expect(await git.headOf('acme/widgets', 'topic')).toEqual({
      authorName: 'Mesh Agent',
      authorEmail: '4242+mesh-agent@users.noreply.github.com',
      committerName: 'Mesh Agent',
      committerEmail: '4242+mesh-agent@users.noreply.github.com',
      subject: 'add a change',
    });
    expect(pr?.data).toMatchObject({ number: 1, base: 'trunk', head: 'topic' });
    expect(github.pulls).toMatchObject([{ head: 'topic', base: 'trunk', by: 'mesh-agent' }]);
  });

  it('runs the pinned gh it offered inside the sandbox, with the granted credential', async () => {
    const [checkout, version] = await script([
      { name: 'checkout_github_repo', args: { repo: 'acme/widgets' } },
      {
        name: 'workspace_exec',
        args: { command: '/usr/bin/gh --version && /usr/bin/gh auth token', cwd: 'widgets' },
      },
    ]);
    expect(checkout?.data).toMatchObject({ gh: { path: '/usr/bin/gh', version: '2.23.0' } });
    expect(version?.text).toContain('gh version 2.23.0 (2023-02-27 Debian 2.23.0+dfsg1-1)');
    // gh read the granted GH_TOKEN, and the observation redacted it like any other.
    expect(version?.text).toMatch(/^\[redacted\]$/m);
    expect(version?.text).not.toContain(TOKEN);
  });

  it('reports a failing clone as content, with the exit code and without the token', async () => {
    git.token = 'ghp_rotatedAwayFromTheAgent000000';
    try {
      const [checkout] = await script([
        { name: 'checkout_github_repo', args: { repo: 'acme/widgets' } },
      ]);
      expect(checkout?.kind).toBe('tool_error');
      expect(checkout?.text).toContain('git clone of acme/widgets (branch trunk) exited with code');
      expect(checkout?.text).toMatch(/Authentication failed|401/);
      expect(checkout?.text).not.toContain(TOKEN);
    } finally {
      git.token = TOKEN;
    }
  });

  it('names the egress the workspace refused when the git host is not on the allowlist', async () => {
    const elsewhere = await startGitHttpServer(TOKEN);
    const agent = await requireAgent(mesh, agentId);
    try {
      await elsewhere.createRepo('acme/widgets', { branch: 'trunk' });
      await setAgentConfig(mesh, agent, 'mesh.github', 'git_base_url', elsewhere.baseUrl);
      const [checkout] = await script([
        { name: 'checkout_github_repo', args: { repo: 'acme/widgets' } },
      ]);
      expect(checkout?.kind).toBe('tool_error');
      expect(checkout?.text).toContain(`Egress refused: ${new URL(elsewhere.baseUrl).host}`);
      expect(checkout?.text).toContain('mesh workspaces grant --allow-host');
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await setAgentConfig(mesh, agent, 'mesh.github', 'git_base_url', git.baseUrl);
      await elsewhere.close();
    }
  });
});
