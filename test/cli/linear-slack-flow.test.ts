import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshIn, serveIn, type ServeProcess } from '../support/cli.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startLinearFake, type LinearFake } from '../support/linear-fake.ts';
import { startSlackFake, type SlackFake } from '../support/slack-fake.ts';

const LINEAR_KEY = 'lin_api_endToEndKey0123456789abcdef';
const SLACK_TOKEN = 'xoxb-end-to-end-token-0123456789';

/*
 * Issue 16's flow as an operator runs it: an agent with its own Linear key and Slack token,
 * `mesh chat` against a Chat Completions fake asking for a Linear issue posted in #ops. The
 * Linear and Slack fakes hold exactly one issue and one message, and `mesh runs show` lists both
 * effects as delivered with what the providers made.
 */
describe('a Linear issue and a Slack post through mesh chat', () => {
  let home: string;
  let chatFake: FakeChatCompletions;
  let linear: LinearFake;
  let slack: SlackFake;
  const output: string[] = [];
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    home = freshMeshHome('mesh-linear-slack-');
    chatFake = await startFakeChatCompletions();
    linear = await startLinearFake();
    linear.keys.add(LINEAR_KEY);
    slack = await startSlackFake();
    slack.tokens.add(SLACK_TOKEN);
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await chatFake?.close();
    await linear?.close();
    await slack?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('opens one issue, posts it once, and shows both delivered', async () => {
    const mesh = meshIn(home);
    const step = async (...args: string[]) => {
      const r = await mesh(...args);
      output.push(r.stdout, r.stderr);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    // Everything beside a running server: each command, the chat included, is a round trip on its
    // socket, and the server's worker runs the turn.
    const setup = serveIn(home, '--port', '0');
    serve = setup;
    await setup.waitFor(/^URL: /);
    writeFileSync(join(home, 'model.key'), 'sk-model-key-0123456789\n');
    writeFileSync(join(home, 'linear.key'), `${LINEAR_KEY}\n`);
    writeFileSync(join(home, 'slack.token'), `${SLACK_TOKEN}\n`);
    const secret = (pkg: string, key: string, file: string) =>
      step(
        'secrets',
        'set',
        '--agent',
        'ada',
        '--package',
        pkg,
        '--key',
        key,
        '--value-file',
        join(home, file),
      );
    const config = (pkg: string, key: string, value: string) =>
      step('config', 'set', '--agent', 'ada', '--package', pkg, key, value);
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
    await secret('mesh.linear', 'api_key', 'linear.key');
    await config('mesh.linear', 'api_url', linear.url);
    await config('mesh.linear', 'allow_loopback_http', 'true');
    await config('mesh.linear', 'default_team', 'ENG');
    await config('mesh.linear', 'webhook_url', 'http://127.0.0.1:9/hooks/linear');
    // mesh.linear has an on_enable hook: it is offered only once enabled, which registers its webhook.
    const offered = async () =>
      (
        JSON.parse(await step('tools', 'list', '--agent', 'ada', '--json')) as {
          tools: { name: string; offered: boolean; reason?: string }[];
        }
      ).tools.find((t) => t.name === 'create_linear_issue');
    expect(await offered()).toMatchObject({
      offered: false,
      reason: 'package mesh.linear is not enabled for this agent',
    });
    // A refused enable is a failure on every face: the command exits non-zero naming the hook's
    // reason and the way to settle it, and the failed transition stays on record.
    linear.failures.push('forbidden');
    const refusedEnable = await mesh('packages', 'enable', 'mesh.linear', '--agent', 'ada');
    output.push(refusedEnable.stdout, refusedEnable.stderr);
    expect(refusedEnable.code).toBe(1);
    expect(refusedEnable.stderr).toContain('enable transition of mesh.linear for ada failed: ');
    expect(refusedEnable.stderr).toContain(
      'settle it with mesh packages compensate mesh.linear --agent ada --how retry|abandon',
    );
    expect(linear.webhooks.size).toBe(0);
    expect(await step('packages', 'install', 'mesh.linear', '--agent', 'ada')).toMatch(
      /^mesh\.linear is in error for ada[^\n]*\n[^\n]*\n {2}1\. \S+ enable disabled → enabled failed /,
    );
    expect(
      await step('packages', 'compensate', 'mesh.linear', '--agent', 'ada', '--how', 'retry'),
    ).toMatch(
      /^mesh\.linear is enabled for ada\.\n {2}transition 2: enable [a-z]+ → enabled succeeded after 1 attempt\(s\) by /,
    );
    expect([...linear.webhooks.values()]).toMatchObject([
      { url: 'http://127.0.0.1:9/hooks/linear', enabled: true },
    ]);
    expect(await offered()).toMatchObject({ offered: true });
    // A changed setting of an enabled install is applied by its on_enable: the webhook is updated
    // in place; one the hook cannot apply parks the install in error, until the task is retried.
    await config('mesh.linear', 'webhook_url', 'http://127.0.0.1:9/hooks/linear-v2');
    expect([...linear.webhooks.values()]).toMatchObject([
      { url: 'http://127.0.0.1:9/hooks/linear-v2' },
    ]);
    const unapplied = await mesh(
      'config',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.linear',
      'webhook_url',
      'ftp://127.0.0.1/hooks',
    );
    output.push(unapplied.stdout, unapplied.stderr);
    expect(unapplied.code).not.toBe(0);
    expect(unapplied.stderr).toContain(
      "the value is stored, but mesh.linear's on_enable could not apply it",
    );
    expect(await offered()).toMatchObject({
      offered: false,
      reason: 'package mesh.linear is in error for this agent',
    });
    await config('mesh.linear', 'webhook_url', 'http://127.0.0.1:9/hooks/linear');
    expect(
      await step('packages', 'compensate', 'mesh.linear', '--agent', 'ada', '--how', 'retry'),
    ).toMatch(/^mesh\.linear is enabled for ada\./);
    expect([...linear.webhooks.values()]).toMatchObject([
      { url: 'http://127.0.0.1:9/hooks/linear' },
    ]);
    expect(await offered()).toMatchObject({ offered: true });
    // Enabled, a new key is a rotation: Linear is asked with it first, and a refused one is not kept.
    writeFileSync(join(home, 'bad.key'), 'lin_api_notAKeyLinearKnows0000000000\n');
    const refused = await mesh(
      'secrets',
      'set',
      '--agent',
      'ada',
      '--package',
      'mesh.linear',
      '--key',
      'api_key',
      '--value-file',
      join(home, 'bad.key'),
    );
    output.push(refused.stdout, refused.stderr);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('mesh.linear refused the new linear_api_key');
    expect(refused.stderr).toContain('the version in use stays');
    expect(refused.stderr).not.toContain('lin_api_notAKeyLinearKnows');
    await secret('mesh.slack', 'token', 'slack.token');
    await config('mesh.slack', 'api_url', slack.apiUrl);
    await config('mesh.slack', 'allow_loopback_http', 'true');

    chatFake.enqueue(
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          {
            id: 'c1',
            name: 'create_linear_issue',
            arguments: JSON.stringify({
              title: 'Deploy failing on main',
              description: 'The deploy job exits 1 since this morning.',
            }),
          },
        ],
      },
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          {
            id: 'c2',
            name: 'post_slack_message',
            arguments: JSON.stringify({ channel: '#ops', text: 'Deploy failing on main: ENG-1' }),
          },
        ],
      },
      { kind: 'completion', content: 'Opened ENG-1 and posted it in #ops.' },
    );
    const chat = JSON.parse(
      await step(
        'chat',
        '--agent',
        'ada',
        '--json',
        'open a Linear issue for the failing deploy and post it in #ops',
      ),
    ) as { run_id: string; status: string; effects: { kind: string; state: string }[] };
    expect(chat.status).toBe('succeeded');
    expect(chat.effects.map((e) => [e.kind, e.state])).toEqual([
      ['linear.issue_create', 'delivered'],
      ['slack.chat_post_message', 'delivered'],
      // The reply is an outbound event too, delivered to the conversation with its message.
      ['reply', 'delivered'],
    ]);

    // Exactly one issue and one message, each made with the agent's own credential.
    expect(linear.issues.size).toBe(1);
    expect([...linear.issues.values()][0]?.title).toBe('Deploy failing on main');
    // Every request but the refused key's one try was made with the agent's own key.
    expect(linear.received.filter((r) => !r.authorized)).toMatchObject([{ field: 'viewer' }]);
    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]).toMatchObject({
      channel: 'C0OPS00001',
      text: 'Deploy failing on main: ENG-1',
    });

    const shown = await step('runs', 'show', chat.run_id);
    const issue = [...linear.issues.values()][0];
    expect(shown).toContain(
      `linear.issue_create to team ENG: delivered after 1 attempt(s) ${issue?.id} ${issue?.url}`,
    );
    expect(shown).toContain(
      `slack.chat_post_message to channel #ops: delivered after 1 attempt(s) C0OPS00001/${slack.posted[0]?.ts}`,
    );
    expect(shown).toMatch(/reply step \d+ to conversation [0-9a-f-]{36}: delivered as message /);

    // Neither credential is in a model request or anything the faces printed.
    for (const request of chatFake.requests) {
      expect(request.body).not.toContain(LINEAR_KEY);
      expect(request.body).not.toContain(SLACK_TOKEN);
    }
    expect(output.join('\n')).not.toContain(LINEAR_KEY);
    expect(output.join('\n')).not.toContain(SLACK_TOKEN);
    expect(setup.lines.join('\n')).not.toContain(LINEAR_KEY);
    expect(setup.lines.join('\n')).not.toContain(SLACK_TOKEN);
  }, 150_000);
});
