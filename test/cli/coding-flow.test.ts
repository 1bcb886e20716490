import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI_DATABASES,
  freshMeshEnv,
  meshBin,
  meshOrFail,
  serveWith,
  type ServeProcess,
} from '../support/cli.ts';
import { startFakeChatCompletions } from '../support/fake-chat-completions.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGitHubFake } from '../support/github-fake.ts';
import { reactingCoder } from '../support/reacting-coder.ts';
import { runEnd } from '../support/sse.ts';

const TOKEN = 'ghp_reactingCoderToken0123456789abcd';

/*
 * Issue 33's coding flow, for real: `mesh chat` drives a model that reacts to what it observes,
 * one tool call per request, in a real bubblewrap workspace against the loopback git and GitHub
 * fakes. It checks out, writes a test and code with a bug, runs the test, reads the failure and
 * fixes the code from it, runs the test until it passes, commits, pushes and opens the PR.
 *
 * The chat process is SIGKILLed in the middle: when the model is asked for its next step right
 * after the failing test. `mesh serve`'s worker resumes the run from its last step. The new
 * holder's workspace is a new one (a resumed coding run is lossy by design), and the model finds
 * out from what it observes and starts over from the checkout. The run still ends with exactly one
 * pull request, and its page shows every step.
 */
describe.each(CLI_DATABASES)(
  'a reacting model codes to a pull request, killed midway, on %s',
  (database) => {
    const closers: (() => Promise<unknown>)[] = [];
    afterAll(async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    });

    it('fixes its bug from the test output, survives the kill and opens exactly one PR', async () => {
      const made = await freshMeshEnv(database, 'mesh-coder-');
      closers.push(() => made.dispose());
      const { home, env } = made;
      const git = await startGitHttpServer(TOKEN);
      closers.push(() => git.close());
      await git.createRepo('acme/widgets', { branch: 'main' });
      const github = await startGitHubFake();
      closers.push(() => github.close());
      github.users.set(TOKEN, { login: 'mesh-agent', id: 4242, name: 'Mesh Agent', email: null });
      github.repos.set('acme/widgets', { defaultBranch: 'main' });

      const coder = reactingCoder({
        repo: 'acme/widgets',
        dir: 'widgets',
        branch: 'add-greeting',
        base: 'main',
        greeting: 'hello, widgets',
      });
      // The chat is killed when the model is asked what to do after the failing test.
      let kill: (() => void) | undefined;
      const model = await startFakeChatCompletions({
        respond: (request) => {
          const messages = (request as { messages: { role: string; content: unknown }[] }).messages;
          const lastTool = messages.filter((m) => m.role === 'tool').at(-1);
          if (kill && typeof lastTool?.content === 'string' && lastTool.content.includes('FAIL:')) {
            const now = kill;
            kill = undefined;
            now();
            return { kind: 'hang' };
          }
          return coder(request);
        },
      });
      closers.push(() => model.close());

      const mesh = meshOrFail(env);
      // Set up as an operator does, beside a running server; then it stops, so that the chat runs
      // its turn in its own process, the one killed below.
      const setup = serveWith(env, '--port', '0');
      closers.push(() => setup.stop());
      await setup.waitFor(/^URL: /);
      const token = (await setup.waitFor(/^Operator token: /)).slice('Operator token: '.length);
      writeFileSync(join(home, 'model.key'), 'sk-model-key-0123456789\n');
      writeFileSync(join(home, 'gh.token'), `${TOKEN}\n`);
      await mesh(
        'providers',
        'add',
        '--name',
        'loop',
        '--base-url',
        model.baseUrl,
        '--api-key-file',
        join(home, 'model.key'),
      );
      await mesh('agents', 'create', 'coder', '--provider', 'loop', '--model', 'fake-model');
      await mesh(
        'agents',
        'budget',
        'coder',
        '--rounds',
        '30',
        '--tool-calls',
        '40',
        '--wall-clock',
        '10m',
      );
      await mesh(
        'secrets',
        'set',
        '--agent',
        'coder',
        '--package',
        'mesh.github',
        '--key',
        'credential',
        '--value-file',
        join(home, 'gh.token'),
      );
      for (const [key, value] of [
        ['api_base_url', github.baseUrl],
        ['git_base_url', git.baseUrl],
        ['allow_loopback_http', 'true'],
      ] as const)
        await mesh('config', 'set', '--agent', 'coder', '--package', 'mesh.github', key, value);
      await mesh('workspaces', 'add', '--kind', 'local', '--name', 'dev', '--dev');
      await mesh(
        'workspaces',
        'grant',
        '--agent',
        'coder',
        '--backend',
        'dev',
        '--allow-host',
        new URL(git.baseUrl).host,
      );
      expect(await setup.stop()).toBe(0);

      const chat = spawn(
        process.execPath,
        [meshBin, 'chat', '--agent', 'coder', 'add a greeting script with a test, and open a PR'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        chat.once('exit', (_code, signal) => resolve(signal)),
      );
      kill = () => chat.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(github.pulls).toHaveLength(0);

      // A serving Mesh's worker resumes the run once the dead chat's lease lapses.
      const serve: ServeProcess = serveWith(env, '--port', '0');
      closers.push(() => serve.stop());
      const url = (await serve.waitFor(/^URL: /)).slice('URL: '.length);
      const api = async (path: string) => {
        const response = await fetch(`${url}${path.slice(1)}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return (await response.json()) as Record<string, unknown>;
      };
      const runs = (await api('/api/agents/coder/runs'))['runs'] as { run_id: string }[];
      expect(runs).toHaveLength(1);
      const runId = runs[0]!.run_id;
      await runEnd(url, token, runId, 90_000);
      type Step = {
        kind: string;
        toolName?: string;
        callId?: string;
        arguments?: string;
        observation?: { text: string };
      };
      const run = (await api(`/api/runs/${runId}`)) as {
        status: string;
        reason: string | null;
        usage: { rounds: number };
        steps: Step[];
      };
      expect(
        run.status,
        `${run.reason ?? ''} ` +
          JSON.stringify(
            run.steps
              .filter((s) => s.kind === 'observation')
              .map((s) => s.observation?.text.slice(0, 200)),
          ),
      ).toBe('succeeded');

      // One tool call per request, over many rounds, each step on the run's page.
      const calls = run.steps.filter((s) => s.kind === 'tool_call');
      const requests = run.steps.filter((s) => s.kind === 'model_request');
      expect(run.usage.rounds).toBeGreaterThanOrEqual(6);
      const responses = run.steps.filter((s) => s.kind === 'model_response') as {
        data?: { toolCalls?: unknown[] };
      }[];
      expect(responses).toHaveLength(run.usage.rounds);
      expect(responses.map((r) => r.data?.toolCalls?.length ?? 0).filter((n) => n > 1)).toEqual([]);
      // One call per response but the last, which answers.
      expect(new Set(calls.map((c) => c.callId)).size).toBe(run.usage.rounds - 1);
      const observations = run.steps
        .filter((s) => s.kind === 'observation')
        .map((s) => s.observation?.text ?? '');
      // It read the failure, fixed the code from it, and the test passed after the fix.
      expect(
        observations.some((o) =>
          o.includes("FAIL: expected 'hello, widgets', got 'helo, widgets'"),
        ),
      ).toBe(true);
      expect(observations.some((o) => o.includes('PASS: greet.sh says hello, widgets'))).toBe(true);
      expect(observations.some((o) => o.includes('PUSHED'))).toBe(true);
      expect(observations.at(-1)).toMatch(/pull request #1/i);
      const shown = await mesh('runs', 'show', runId.slice(0, 8));
      for (const step of calls) expect(shown).toContain(step.toolName ?? '?');
      // Every response has its request; the request the killed chat never heard back on is kept.
      expect(requests.length).toBeGreaterThanOrEqual(run.usage.rounds);

      // Exactly one pull request, by the agent, with the fixed code on its branch.
      expect(github.pulls).toHaveLength(1);
      expect(github.pulls[0]).toMatchObject({
        head: 'add-greeting',
        base: 'main',
        by: 'mesh-agent',
      });
      const head = await git.headOf('acme/widgets', 'add-greeting');
      expect(head).toMatchObject({
        authorName: 'Mesh Agent',
        subject: 'Add a greeting with its test',
      });
      expect(await git.fileAt('acme/widgets', 'add-greeting', 'greet.sh')).toBe(
        'echo "hello, widgets"\n',
      );
      const reply = (
        run.steps.find((s) => s.kind === 'reply') as { data?: { body?: string } } | undefined
      )?.data?.body;
      expect(reply).toMatch(/^Done: .*pull request #1/i);
    }, 240_000);
  },
);
