import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshIn, serveIn, type ServeProcess } from '../support/cli.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
  type FakeReply,
} from '../support/fake-chat-completions.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';

const MODEL_KEY = 'sk-model-key-browser-0123456789';

/** The text of the last tool result in a Chat Completions request, and how many there were. */
function lastResult(request: unknown): { text: string; results: number } {
  const messages = (request as { messages: { role: string; content: unknown }[] }).messages;
  const results = messages.filter((m) => m.role === 'tool');
  const last = results.at(-1);
  return { text: typeof last?.content === 'string' ? last.content : '', results: results.length };
}

const call = (id: string, name: string, args: object): FakeReply => ({
  kind: 'completion',
  content: null,
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/**
 * A model that browses as a person would: it opens the site, reads it, follows the contact link
 * by the ref the snapshot gave it, fills and sends the form by the refs it reads, checks the
 * answer page, takes a screenshot and answers with what the page said.
 */
function browsingModel(site: TestSite): (request: unknown) => FakeReply {
  return (request) => {
    const { text, results } = lastResult(request);
    const ref = (pattern: RegExp) => pattern.exec(text)?.[1] ?? 'e999';
    switch (results) {
      case 0:
        return call('c1', 'browser_navigate', { url: site.url });
      case 1:
        return call('c2', 'browser_read', {});
      case 2:
        return call('c3', 'browser_act', {
          action: 'click',
          ref: ref(/\[(e\d+)\] link "Contact us"/),
        });
      case 3:
        return call('c4', 'browser_read', { mode: 'snapshot' });
      case 4:
        return call('c5', 'browser_act', {
          action: 'type',
          ref: ref(/\[(e\d+)\] textbox "Your name"/),
          text: 'Ada Lovelace',
        });
      case 5:
        // The refs of the form stay valid while the page is the same: read from the snapshot.
        return call('c6', 'browser_act', { action: 'select', ref: 'e2', value: 'Shipping' });
      case 6:
        return call('c7', 'browser_act', { action: 'click', ref: 'e4' });
      case 7:
        return call('c8', 'browser_read', { mode: 'text' });
      case 8:
        return call('c9', 'browser_screenshot', {});
      default: {
        return {
          kind: 'completion',
          content:
            'I sent the contact form for Ada Lovelace (shipping); the site answered: request number 4127.',
        };
      }
    }
  };
}

/*
 * Issue 19's first "Done when", as an operator runs it beside a running `mesh serve`: a local
 * browser backend registered and granted with `mesh browsers`, then `mesh chat` against a Chat
 * Completions fake whose model navigates a loopback site, reads it, fills and submits a form,
 * takes a screenshot and answers. The run shows each action as its own step and the screenshot
 * as an image artifact, and the session is released when the run ends.
 */
describe('browser sessions through mesh chat', () => {
  let home: string;
  let model: FakeChatCompletions;
  let site: TestSite;
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    home = freshMeshHome('mesh-browser-flow-');
    site = await startTestSite();
    model = await startFakeChatCompletions({ respond: browsingModel(site) });
    serve = serveIn(home, '--port', '0');
    await serve.waitFor(/^URL: /);
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    await site?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const mesh = (...args: string[]) => meshIn(home)(...args);
  const step = async (...args: string[]) => {
    const r = await mesh(...args);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };

  it('registers and grants a browser backend, refusing what is not allowed, naming why', async () => {
    writeFileSync(join(home, 'model.key'), `${MODEL_KEY}\n`);
    await step(
      'providers',
      'add',
      '--name',
      'loop',
      '--base-url',
      model.baseUrl,
      '--api-key-file',
      join(home, 'model.key'),
    );
    await step('agents', 'create', 'ada', '--provider', 'loop', '--model', 'fake-model');
    await step('agents', 'budget', 'ada', '--rounds', '12');

    const noDev = await mesh('browsers', 'add', '--kind', 'local', '--name', 'chromium');
    expect(noDev.code).not.toBe(0);
    expect(noDev.stderr).toMatch(/development only: add it with --dev/);
    const unknown = await mesh('browsers', 'add', '--kind', 'netscape', '--name', 'old');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/kind/);
    expect(await step('browsers', 'add', '--kind', 'local', '--name', 'chromium', '--dev')).toMatch(
      /Added browser backend chromium \(local, development only\)/,
    );
    const missing = await mesh('browsers', 'grant', '--agent', 'ada', '--backend', 'nope');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(
      /no browser backend named "nope"; list them with mesh browsers list/,
    );

    // Before the grant the browser tools are withheld, with the reason.
    const before = await step('tools', 'list', '--agent', 'ada');
    expect(before).toMatch(
      /browser_navigate\s+browser\s+withheld: needs a browser backend; none is configured/,
    );
    expect(
      await step(
        'browsers',
        'grant',
        '--agent',
        'ada',
        '--backend',
        'chromium',
        '--allow-loopback',
      ),
    ).toMatch(/Granted ada browser sessions on chromium, loopback addresses allowed/);
    expect(await step('tools', 'list', '--agent', 'ada')).toMatch(
      /browser_act\s+browser\s+offered/,
    );
    const listed = await step('browsers', 'list');
    expect(listed).toMatch(/chromium\s+local\s+DEVELOPMENT ONLY/);
    expect(listed).toMatch(/ada → chromium\s+loopback allowed/);
  }, 60_000);

  it('browses a site, fills and sends its form, takes a screenshot and answers; each action is a step', async () => {
    const r = await mesh(
      'chat',
      '--agent',
      'ada',
      '--json',
      'Send Acme a shipping request for Ada Lovelace',
    );
    expect(r.code, r.stderr).toBe(0);
    const sent = JSON.parse(r.stdout) as { run_id: string; status: string; reply: string };
    expect(sent.status).toBe('succeeded');
    expect(sent.reply).toContain('request number 4127');
    // The form reached the site once, as the model filled it.
    expect(site.posts).toEqual([{ name: 'Ada Lovelace', topic: 'shipping' }]);

    const shown = JSON.parse(await step('runs', 'show', sent.run_id, '--json')) as {
      steps: {
        kind: string;
        toolName?: string;
        status: string;
        data?: Record<string, unknown>;
        observation?: {
          kind: string;
          content?: { text?: string };
          artifacts?: { mediaType: string; id: string }[];
        };
      }[];
      usage: Record<string, number>;
    };
    const calls = shown.steps.filter((s) => s.kind === 'tool_call').map((s) => s.toolName);
    expect(calls).toEqual([
      'browser_navigate',
      'browser_read',
      'browser_act',
      'browser_read',
      'browser_act',
      'browser_act',
      'browser_act',
      'browser_read',
      'browser_screenshot',
    ]);
    const observations = shown.steps.filter((s) => s.kind === 'observation');
    expect(observations.every((o) => o.observation?.kind === 'result')).toBe(true);
    const json = JSON.stringify(shown);
    expect(json).toContain('Thanks, Ada Lovelace!');
    // The screenshot is an image artifact of its observation.
    const artifacts = observations.flatMap((o) => o.observation?.artifacts ?? []);
    expect(artifacts.some((a) => a.mediaType === 'image/png')).toBe(true);
    // Session time is metered into the run's usage.
    expect(shown.usage['sessionMs']).toBeGreaterThan(0);
    // The run ended: its session was released.
    expect(await step('browsers', 'list')).toMatch(/Live sessions:\n\s+none/);
    // The released session's recording (Mesh's own, for a local backend) is the run's artifact:
    // each action with a screenshot after it, and what was typed only by its length.
    const sessions = (
      JSON.parse(await step('runs', 'show', sent.run_id, '--json')) as {
        browser_sessions: { state: string; recording_artifact_id: string | null }[];
      }
    ).browser_sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]?.state).toBe('released');
    const recordingId = sessions[0]?.recording_artifact_id ?? '';
    expect(recordingId).not.toBe('');
    expect(await step('runs', 'show', sent.run_id)).toMatch(
      new RegExp(
        `browser session \\S+\\s+released \\(its run ended\\)\\s+recording artifact ${recordingId}`,
      ),
    );
  }, 120_000);
});
