import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import {
  freshMeshHome,
  meshEnv,
  removeMeshHome,
  serveWith,
  type ServeProcess,
} from '../support/cli.ts';

/*
 * A posted message is a queued run, and a queued run is a row: `mesh serve` killed before any
 * worker took it, the next start picks it up. The server drives one turn at a time here
 * (MESH_TURN_CONCURRENCY=1) and the first turn's model request hangs, so the second message is
 * still queued when the server dies.
 */
describe('a queued run across a restart of mesh serve (embedded database)', () => {
  const home = freshMeshHome('mesh-queued-');
  const env = { ...meshEnv(home), MESH_TURN_CONCURRENCY: '1' };
  let fake: FakeChatCompletions;
  const servers: ServeProcess[] = [];

  beforeAll(async () => {
    fake = await startFakeChatCompletions();
  });
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await fake.close();
    await removeMeshHome(home);
  });

  async function start(): Promise<string> {
    const server = serveWith(env, '--port', '0');
    servers.push(server);
    return (await server.waitFor(/^URL: /)).slice('URL: '.length);
  }

  it('is picked up by the next server and answered', async () => {
    const first = servers.length;
    let url = await start();
    const token = (await servers[first]?.waitFor(/^Operator token: /))?.slice(
      'Operator token: '.length,
    );
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path.slice(1)}`, {
        method,
        headers: { authorization: `Bearer ${token ?? ''}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const provider = {
      name: 'paced',
      kind: 'openai_compatible',
      base_url: fake.baseUrl,
      api_key: 'sk-queued-0123456789',
    };
    expect((await api('POST', '/api/providers', provider)).status).toBe(201);
    const agent = { name: 'ada', provider: 'paced', model: 'fake-model' };
    expect((await api('POST', '/api/agents', agent)).status).toBe(201);

    fake.enqueue({ kind: 'hang' });
    const busy = await api('POST', '/api/agents/ada/messages', { body: 'first, slowly' });
    expect(busy.status).toBe(202);
    await fake.waitForRequests(1);
    const queued = await api('POST', '/api/agents/ada/messages', { body: 'second, queued' });
    expect(queued.status).toBe(202);
    const runId = String(queued.json['run_id']);
    expect((await api('GET', `/api/runs/${runId}`)).json['status']).toBe('queued');

    servers[first]?.child.kill('SIGKILL');
    await servers[first]?.exited;

    // The next start's worker takes the queued run, and the first run too once its lease has run
    // out (on a loaded machine, before the queued one): each gets an answer, in either order.
    fake.enqueue({ kind: 'completion', content: 'Picked up after the restart.' });
    fake.enqueue({ kind: 'completion', content: 'Picked up after the restart.' });
    url = await start();
    let run = (await api('GET', `/api/runs/${runId}`)).json as {
      status: string;
      steps: { kind: string; data: Record<string, unknown> | null }[];
    };
    // Waits on the run itself (the server answers when it settles), never on a timer.
    while (run.status === 'queued' || run.status === 'running')
      run = (await api('GET', `/api/runs/${runId}?wait=60`)).json as typeof run;
    expect(run.status).toBe('succeeded');
    expect(run.steps.find((s) => s.kind === 'reply')?.data?.['body']).toBe(
      'Picked up after the restart.',
    );
    // The message it answers was recorded once, before the first server answered 202.
    const conversation = String(queued.json['conversation_id']);
    const messages = (await api('GET', `/api/conversations/${conversation}/messages`)).json as {
      messages: { direction: string; body: string }[];
    };
    expect(messages.messages.map((m) => [m.direction, m.body])).toEqual([
      ['inbound', 'second, queued'],
      ['outbound', 'Picked up after the restart.'],
    ]);
  }, 60_000);
});
