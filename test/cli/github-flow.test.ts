import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEnd } from '../support/sse.ts';
import {
  freshMeshHome,
  meshBin,
  meshEnv,
  meshIn,
  removeMeshHome,
  serveIn,
  type ServeProcess,
} from '../support/cli.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.ts';
import { startGitHubFake, type GitHubFake } from '../support/github-fake.ts';

const TOKEN = 'ghp_endToEndFlowToken0123456789abcd';

/*
 * Issue 14's end-to-end flow, as an operator runs it: `mesh chat` against a Chat Completions fake
 * drives checkout (GitHub's REST fake and a git smart-HTTP server behind a token check), a file
 * write, a test run, a commit and push, and the pull request — in a real bubblewrap workspace.
 * The chat process is SIGKILLed right after GitHub recorded the pull request and before it
 * answered; `mesh serve`'s worker resumes the run and settles the create call through the outbound
 * machinery: it finds the pull request by the marker in its body instead of opening it again, and
 * the fake holds exactly one pull request.
 */
describe('checkout to pull request through mesh chat, with a crash after the create call', () => {
  let home: string;
  let chatFake: FakeChatCompletions;
  let git: GitHttpServer;
  let github: GitHubFake;
  let serve: ServeProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    home = freshMeshHome('mesh-gh-flow-');
    chatFake = await startFakeChatCompletions();
    git = await startGitHttpServer(TOKEN);
    await git.createRepo('acme/widgets', { branch: 'main' });
    github = await startGitHubFake();
    github.users.set(TOKEN, { login: 'mesh-agent', id: 4242, name: 'Mesh Agent', email: null });
    github.repos.set('acme/widgets', { defaultBranch: 'main' });
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await chatFake?.close();
    await git?.close();
    await github?.close();
    await removeMeshHome(home);
  });

  it('pushes the branch as the agent, opens exactly one PR, and never shows the token', async () => {
    const mesh = meshIn(home);
    const step = async (...args: string[]) => {
      const r = await mesh(...args);
      output.push(r.stdout, r.stderr);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    };
    // Set up as an operator does, with the CLI beside a running server (each command is then a
    // round trip on its socket, not a start of the embedded database); then the server stops,
    // so that the chat below runs its turn in its own process.
    const setup = serveIn(home, '--port', '0');
    await setup.waitFor(/^URL: /);
    // The operator token is printed once, on the home's first start.
    const token = (await setup.waitFor(/^Operator token: /)).slice('Operator token: '.length);
    writeFileSync(join(home, 'model.key'), 'sk-model-key-0123456789\n');
    writeFileSync(join(home, 'gh.token'), `${TOKEN}\n`);
    await step(
      'providers',
      'add',
      '--name',
      'loop',
      '--base-url',
      chatFake.baseUrl,
      '--api-key-file',
      join(home, 'model.key'),
    );
    await step('agents', 'create', 'ada', '--provider', 'loop', '--model', 'fake-model');
    await step(
      'secrets',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.github',
      '--key',
      'credential',
      '--value-file',
      join(home, 'gh.token'),
    );
    await step(
      'config',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.github',
      'api_base_url',
      github.baseUrl,
    );
    await step(
      'config',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.github',
      'git_base_url',
      git.baseUrl,
    );
    await step(
      'config',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.github',
      'allow_loopback_http',
      'true',
    );
    await step('workspaces', 'add', '--kind', 'local', '--name', 'dev', '--dev');
    await step(
      'workspaces',
      'grant',
      '--agent',
      'ada',
      '--backend',
      'dev',
      '--allow-host',
      new URL(git.baseUrl).host,
    );

    expect(await setup.stop()).toBe(0);

    const calls = [
      {
        id: 'c1',
        name: 'checkout_github_repo',
        arguments: JSON.stringify({ repo: 'acme/widgets' }),
      },
      {
        id: 'c2',
        name: 'workspace_write_file',
        arguments: JSON.stringify({ path: 'widgets/greet.sh', content: 'echo "hello, widgets"\n' }),
      },
      {
        id: 'c3',
        name: 'workspace_exec',
        arguments: JSON.stringify({
          command: 'sh greet.sh | grep -q "hello, widgets" && echo TESTS PASSED',
          cwd: 'widgets',
        }),
      },
      {
        id: 'c4',
        name: 'workspace_exec',
        arguments: JSON.stringify({
          command:
            'git checkout -q -b add-greeting && git add greet.sh && git commit -q -m "Add a greeting" && git push -q origin add-greeting && echo PUSHED',
          cwd: 'widgets',
        }),
      },
      {
        id: 'c5',
        name: 'create_github_pull_request',
        arguments: JSON.stringify({
          repo: 'acme/widgets',
          head: 'add-greeting',
          base: 'main',
          title: 'Add a greeting',
          body: 'Tested in the workspace.',
        }),
      },
    ];
    chatFake.enqueue(
      { kind: 'completion', content: null, toolCalls: calls },
      { kind: 'completion', content: 'I pushed add-greeting and opened the PR.' },
    );

    // The chat, killed the moment GitHub has the PR and before it hears back.
    const chat = spawn(
      process.execPath,
      [meshBin, 'chat', '--agent', 'ada', 'add a greeting script and open a PR'],
      {
        env: meshEnv(home),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    chat.stdout.on('data', (d: Buffer) => output.push(d.toString('utf8')));
    chat.stderr.on('data', (d: Buffer) => output.push(d.toString('utf8')));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      chat.once('exit', (_code, signal) => resolve(signal)),
    );
    github.onPullCreated = async () => {
      chat.kill('SIGKILL');
      await exited;
    };
    expect(await exited).toBe('SIGKILL');
    expect(github.pulls).toHaveLength(1);

    // The branch arrived with the agent's GitHub identity.
    const head = await git.headOf('acme/widgets', 'add-greeting');
    expect(head).toMatchObject({
      authorName: 'Mesh Agent',
      authorEmail: '4242+mesh-agent@users.noreply.github.com',
    });

    // A serving Mesh's worker resumes the run once the dead chat's lease lapses.
    serve = serveIn(home, '--port', '0');
    const url = (await serve.waitFor(/^URL: /)).slice('URL: '.length);
    const api = async (path: string) => {
      const response = await fetch(`${url}${path.slice(1)}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await response.text();
      output.push(text);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const runs = (await api('/api/agents/ada/runs'))['runs'] as { run_id: string }[];
    expect(runs).toHaveLength(1);
    const runId = runs[0]!.run_id;
    type RunView = {
      status: string;
      steps: { kind: string; callId?: string; observation?: { kind: string; text: string } }[];
    };
    // Followed on its event stream to its end, not polled.
    await runEnd(url, token, runId, 45_000);
    const run = (await api(`/api/runs/${runId}`)) as unknown as RunView;
    expect(run.status).toBe('succeeded');
    const observed = (id: string) =>
      run.steps.find((s) => s.kind === 'observation' && s.callId === id)?.observation;
    expect(observed('c3')?.text).toContain('TESTS PASSED');
    expect(observed('c4')?.text).toContain('PUSHED');
    // Found by its marker, not sent again: reported opened, with GitHub's number.
    expect(observed('c5')?.kind).toBe('result');
    expect(observed('c5')?.text).toContain('Opened pull request #1 in acme/widgets');
    // Exactly one pull request, by the agent, after the crash and the resume.
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]).toMatchObject({ head: 'add-greeting', base: 'main', by: 'mesh-agent' });
    // The workspace goes with the run: released right after the run's end is recorded.
    await expect
      .poll(async () => ((await api('/api/workspaces')) as { workspaces: unknown[] }).workspaces)
      .toEqual([]);

    // The token is in no model request, no step, no log line and nothing the faces printed.
    expect(chatFake.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of chatFake.requests) expect(request.body).not.toContain(TOKEN);
    expect(output.join('\n')).not.toContain(TOKEN);
    expect(serve.lines.join('\n')).not.toContain(TOKEN);
  }, 150_000);
});
