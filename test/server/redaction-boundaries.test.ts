import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { databaseText, expectNoLeak } from '../support/leak-scan.ts';
import {
  startFakeMcpServer,
  textTool,
  type FakeContentBlock,
  type FakeMcpServer,
} from '../support/mcp-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Generated secrets, sent back in generated encodings through every boundary where text or bytes
 * are kept or shown: a remote tool's text, structured content (1,000 levels deep once: the SDK's
 * own server gives up at 10,000; redaction's own test takes 10,000), an image
 * and an application/octet-stream blob holding the raw bytes, a resource link whose URI carries
 * the token, a tool error, the model's own reply. Then no form of the secret may be in any
 * database column, artifact byte, API body, log line or model request.
 */

/** How a server prints a secret. */
const ENCODINGS: Record<string, (s: string) => string> = {
  verbatim: (s) => `token ${s}`,
  json: (s) => JSON.stringify({ echoed: s }),
  unicode: (s) =>
    Array.from(s, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  percent: (s) => `https://idp.example/cb?t=${encodeURIComponent(s)}`,
  percentAll: (s) => Array.from(Buffer.from(s), (b) => `%${b.toString(16).toUpperCase()}`).join(''),
  basic: (s) => `Authorization: Basic ${Buffer.from(`agent:${s}`).toString('base64')}`,
  mime: (s) =>
    Buffer.from(`${'-'.repeat(57)}${s}${'='.repeat(90)}`)
      .toString('base64')
      .replace(/(.{76})/g, '$1\r\n'),
  base64url: (s) => Buffer.from(s).toString('base64url'),
  xxd: (s) =>
    (
      Buffer.from(s)
        .toString('hex')
        .match(/.{1,4}/g) ?? []
    ).join(' '),
  colons: (s) => (Buffer.from(s).toString('hex').toUpperCase().match(/../g) ?? []).join(':'),
};

/** A deep structure holding the secret at its bottom. */
function deep(secret: string, levels: number): unknown {
  let value: unknown = secret;
  for (let i = 0; i < levels; i++) value = i % 2 ? { k: value } : [value];
  return value;
}

describe.each(testDatabases())('secrets through every boundary, on $name', (database) => {
  let server: TestServer;
  let model: FakeChatCompletions;
  let mcp: FakeMcpServer;
  let dispose: () => Promise<void>;
  /** What the fake server sends back for the current case. */
  let current: { secret: string; encodings: string[]; deep: boolean } = {
    secret: '',
    encodings: [],
    deep: false,
  };

  beforeAll(async () => {
    model = await startFakeChatCompletions();
    mcp = await startFakeMcpServer({
      tools: [textTool('leak', 'Echoes what it was sent, every way')],
      call: (name) => {
        const { secret } = current;
        const printed = current.encodings.map((e) => ENCODINGS[e]?.(secret) ?? '').join('\n');
        const raw = Buffer.from(`\x89PNG\r\n\x1a\n${secret}\x00tail`, 'latin1').toString('base64');
        const content: FakeContentBlock[] = [
          { type: 'text', text: `${name} saw:\n${printed}` },
          { type: 'image', data: raw, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: `https://files.example/a.bin?token=${encodeURIComponent(secret)}`,
              mimeType: 'application/octet-stream',
              blob: Buffer.from(`head${secret}tail`).toString('base64'),
            },
          },
          {
            type: 'resource_link',
            uri: `https://files.example/doc?access_token=${secret}`,
            name: 'doc',
          },
        ];
        return {
          content,
          structuredContent: current.deep
            ? { nested: deep(secret, 1_000) }
            : { echoed: secret, printed },
        };
      },
    });
    const opened = await database.open();
    dispose = () => opened.dispose();
    server = await startTestServer(opened.db);
    const api = server.api.bind(server);
    for (const [path, body] of [
      [
        '/api/providers',
        {
          name: 'fake',
          kind: 'openai_compatible',
          base_url: model.baseUrl,
          api_key: 'sk-fake-model-key',
        },
      ],
      ['/api/agents', { name: 'leaker', provider: 'fake', model: 'fake-1' }],
      ['/api/mcp/providers', { slug: 'leaky', url: mcp.url, allow_loopback_http: true }],
    ] as const) {
      const res = await api('POST', path, body);
      expect(res.status, res.text).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await model?.close();
    await mcp?.close();
    await dispose?.();
  });

  it('leaves no generated secret in any column, artifact, body, log line or model request', async () => {
    const seed = Number(process.env['MESH_TEST_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`redaction-boundaries seed=${seed}: replay with MESH_TEST_SEED=${seed}`);
    const api = server.api.bind(server);
    const secrets: string[] = [];
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[!-~]{16,40}$/),
        fc.subarray(Object.keys(ENCODINGS), { minLength: 1 }),
        fc.constantFrom(...Object.keys(ENCODINGS)),
        async (tail, encodings, modelEncoding) => {
          round += 1;
          // A prefix keeps generated secrets apart from each other and from ordinary text.
          const secret = `K${round}~${tail}`;
          secrets.push(secret);
          current = { secret, encodings, deep: round === 1 };
          const connected = await api('PUT', '/api/agents/leaker/mcp/leaky/token', {
            value: secret,
          });
          expect(connected.status, connected.text).toBe(200);
          model.enqueue(
            {
              kind: 'completion',
              toolCalls: [{ id: `call_${round}`, name: 'leaky__leak', arguments: '{"q":"x"}' }],
            },
            { kind: 'completion', content: `Done: ${ENCODINGS[modelEncoding]?.(secret) ?? ''}` },
          );
          const sent = await api('POST', '/api/agents/leaker/messages?wait=60', {
            body: 'leak it',
          });
          expect(sent.json, sent.text).toMatchObject({ status: 'succeeded' });
          const runId = (sent.json as { run_id: string }).run_id;
          const run = await api('GET', `/api/runs/${runId}`);
          expect(run.text).toContain('[redacted]');
          // Every artifact, as the API serves its bytes.
          const artifacts = [...run.text.matchAll(/"artifact_?[iI]d":"([0-9a-f-]{36})"/g)].map(
            (m) => m[1],
          );
          expect(artifacts.length).toBeGreaterThanOrEqual(2);
          for (const id of new Set(artifacts)) {
            const res = await fetch(`${server.url}api/runs/${runId}/artifacts/${id}/content`, {
              headers: { authorization: `Bearer ${server.token}` },
            });
            expect(res.status).toBe(200);
            expectNoLeak(
              `artifact ${id}`,
              Buffer.from(await res.arrayBuffer()).toString('latin1'),
              [secret],
            );
          }
        },
      ),
      { seed, numRuns: 6 },
    );
    for (const path of ['/api/agents/leaker/runs', '/api/agents/leaker/mcp/leaky/catalog'])
      expect((await api('GET', path)).status).toBe(200);
    expectNoLeak('API bodies', server.bodies.join('\n'), secrets);
    expectNoLeak('log lines', server.logs.join('\n'), secrets);
    expectNoLeak('model requests', model.requests.map((r) => r.body).join('\n'), secrets);
    for (const [table, text] of await databaseText(server.mesh.db))
      expectNoLeak(`table ${table}`, text, secrets);
  }, 120_000);
});
