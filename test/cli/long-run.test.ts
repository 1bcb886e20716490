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
import { startFakeChatCompletions, type FakeReply } from '../support/fake-chat-completions.ts';
import { runEnd } from '../support/sse.ts';

const ROUNDS = 20;

/** The command of tool round `n`: 400 numbers of its own, about a thousand tokens of output. */
const command = (n: number) => `seq ${n * 1000 + 1} ${n * 1000 + 400}`;

/*
 * Issue 33, "long runs stay durable and fit their context": a run of 20 rounds (19 tool rounds
 * of a real bubblewrap workspace, one call each, then the answer) is SIGKILLed twice — the chat
 * that started it at round 5, then the `mesh serve` that resumed it at round 12 — and a third
 * process finishes it from its last step. Every call ran once. Its output would overflow the
 * model's 12,000-token window long before the end: each request stays inside the input budget
 * because older results are reduced to an excerpt and where they are kept, while every step
 * keeps the whole observation.
 */
describe.each(CLI_DATABASES)('a 20-round run killed twice, on %s', (database) => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  });

  it('resumes from its last step each time, runs every call once and fits every request', async () => {
    const made = await freshMeshEnv(database, 'mesh-long-');
    closers.push(() => made.dispose());
    const { home, env } = made;
    // The process to kill when the model is asked for tool round `at` (one at a time).
    const kills: { at: number; kill: () => void }[] = [];
    const model = await startFakeChatCompletions({
      respond: (request): FakeReply => {
        const messages = (request as { messages: { role: string }[] }).messages;
        const done = messages.filter((m) => m.role === 'tool').length;
        const due = kills.findIndex((k) => k.at === done + 1);
        if (due >= 0) {
          const [k] = kills.splice(due, 1);
          k?.kill();
          return { kind: 'hang' };
        }
        if (done >= ROUNDS - 1) return { kind: 'completion', content: `Ran ${done} commands.` };
        return {
          kind: 'completion',
          content: null,
          toolCalls: [
            {
              id: `long_${done + 1}`,
              name: 'workspace_exec',
              arguments: JSON.stringify({ command: command(done + 1) }),
            },
          ],
        };
      },
    });
    closers.push(() => model.close());

    const mesh = meshOrFail(env);
    const setup = serveWith(env, '--port', '0');
    closers.push(() => setup.stop());
    await setup.waitFor(/^URL: /);
    const token = (await setup.waitFor(/^Operator token: /)).slice('Operator token: '.length);
    writeFileSync(join(home, 'model.key'), 'sk-model-key-0123456789\n');
    await mesh(
      'providers',
      'add',
      '--name',
      'loop',
      '--base-url',
      model.baseUrl,
      '--api-key-file',
      join(home, 'model.key'),
      '--context-tokens',
      '12000',
    );
    await mesh('agents', 'create', 'long', '--provider', 'loop', '--model', 'fake-model');
    await mesh(
      'agents',
      'budget',
      'long',
      '--rounds',
      String(ROUNDS),
      '--tool-calls',
      '30',
      '--wall-clock',
      '10m',
    );
    await mesh('workspaces', 'add', '--kind', 'local', '--name', 'dev', '--dev');
    await mesh('workspaces', 'grant', '--agent', 'long', '--backend', 'dev');
    expect(await setup.stop()).toBe(0);

    // The chat dies asked for round 5; the first server to resume the run dies asked for round 12.
    const chat = spawn(process.execPath, [meshBin, 'chat', '--agent', 'long', 'run the numbers'], {
      env,
      stdio: 'ignore',
    });
    const chatDied = new Promise((resolve) => chat.once('exit', (_c, signal) => resolve(signal)));
    kills.push({ at: 5, kill: () => chat.kill('SIGKILL') });
    expect(await chatDied).toBe('SIGKILL');
    const first: ServeProcess = serveWith(env, '--port', '0');
    closers.push(() => first.stop());
    const firstDied = new Promise((resolve) =>
      first.child.once('exit', (_c, signal) => resolve(signal)),
    );
    kills.push({ at: 12, kill: () => first.child.kill('SIGKILL') });
    expect(await firstDied).toBe('SIGKILL');

    const last: ServeProcess = serveWith(env, '--port', '0');
    closers.push(() => last.stop());
    const url = (await last.waitFor(/^URL: /)).slice('URL: '.length);
    const api = async (path: string) =>
      (await (
        await fetch(`${url}${path.slice(1)}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Record<string, unknown>;
    const runId = ((await api('/api/agents/long/runs'))['runs'] as { run_id: string }[])[0]!.run_id;
    await runEnd(url, token, runId, 120_000);
    type Step = {
      kind: string;
      callId?: string;
      data?: { estimate?: { total: number; budget: number; reducedObservations?: number } };
      observation?: { text: string };
    };
    const run = (await api(`/api/runs/${runId}`)) as {
      status: string;
      reason: string | null;
      usage: { rounds: number; toolCalls: number };
      steps: Step[];
    };
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.usage.rounds).toBe(ROUNDS);

    // Every call once, in order, each observation whole in its step.
    const calls = run.steps.filter((s) => s.kind === 'tool_call').map((s) => s.callId);
    expect(calls).toEqual(Array.from({ length: ROUNDS - 1 }, (_, i) => `long_${i + 1}`));
    const observations = run.steps.filter((s) => s.kind === 'observation');
    expect(observations).toHaveLength(ROUNDS - 1);
    for (const [i, o] of observations.entries()) {
      expect(o.observation?.text).toContain(`${(i + 1) * 1000 + 1}\n`);
      expect(o.observation?.text).toContain(`${(i + 1) * 1000 + 400}\n`);
    }

    // Every request within the input budget; the later ones only by reducing older results.
    const estimates = run.steps.flatMap((s) =>
      s.kind === 'model_request' && s.data?.estimate ? [s.data.estimate] : [],
    );
    expect(estimates.length).toBeGreaterThanOrEqual(ROUNDS);
    for (const e of estimates) expect(e.total).toBeLessThanOrEqual(e.budget);
    expect(estimates.at(-1)?.reducedObservations).toBeGreaterThan(0);
    // What the model was sent: the oldest results reduced, naming where they are kept.
    const lastSent = model.requests.at(-1)?.json as {
      messages: { role: string; content: string }[];
    };
    const sentTools = lastSent.messages.filter((m) => m.role === 'tool');
    expect(sentTools).toHaveLength(ROUNDS - 1);
    expect(sentTools[0]?.content).toMatch(
      /^\[An older result, reduced to fit the context.*step \d+\.\]/,
    );
    expect(sentTools.at(-1)?.content).toContain(`${(ROUNDS - 1) * 1000 + 400}`);
    const shown = await mesh('runs', 'show', runId.slice(0, 8));
    expect(shown).toMatch(/older results reduced to an excerpt to fit the context/);
  }, 240_000);
});
