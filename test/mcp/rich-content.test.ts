import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/app/agents/agents.ts';
import { connectAgent } from '../../src/app/mcp/connections.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { AgentRecord } from '../../src/run/records.ts';
import { insertModelProvider } from '../../src/store/model-providers.ts';
import { getArtifact } from '../../src/store/artifacts.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeChatCompletions } from '../support/fake-chat-completions.ts';
import {
  startFakeMcpServer,
  textTool,
  type FakeContentBlock,
  type FakeMcpServer,
} from '../support/mcp-server.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/** A 1×1 PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PNG = Buffer.from(PNG_BASE64, 'base64');
const WAV = Buffer.from('RIFF\0\0\0\0WAVEfmt fake audio bytes');
const PDF = Buffer.from('%PDF-1.4 not really a pdf\n');
/** An image, a sound and an embedded PDF, as a server sends them: the blocks stored as artifacts. */
const MEDIA: FakeContentBlock[] = [
  { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
  { type: 'audio', data: WAV.toString('base64'), mimeType: 'audio/wav' },
  {
    type: 'resource',
    resource: {
      uri: 'file:///r.pdf',
      mimeType: 'application/pdf',
      blob: PDF.toString('base64'),
    },
  },
];
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

interface Link {
  artifactId: string;
  kind: string;
  mediaType: string;
  sizeBytes: number;
  uri?: string;
}

describe.each(testDatabases())('rich MCP content on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  let mcp: FakeMcpServer;
  let ada: AgentRecord;

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    server = await startTestServer(opened.db);
    mcp = await startFakeMcpServer({ tools: [textTool('snap', 'Takes a picture')] });
    ada = await requireAgent(
      server.mesh,
      await scriptedAgent(server.mesh, { fallback: { content: 'ok' } }, 'ada-rich'),
    );
    await addToolProvider(server.mesh, { slug: 'cam', url: mcp.url, allowLoopbackHttp: true });
    await connectAgent(server.mesh, ada, 'cam', 'tok');
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await dispose?.();
  });

  const call = () =>
    callToolAsOperator(server.mesh, {
      agent: ada.name,
      tool: 'cam__snap',
      arguments: '{}',
      operator: 'test',
    });

  it('stores images, audio and embedded blobs as artifacts of the step, with their bytes and sizes', async () => {
    mcp.state.call = () => ({
      content: [
        { type: 'text', text: 'here is the picture' },
        ...MEDIA,
        { type: 'resource_link', uri: 'https://example.test/x', name: 'x' },
      ],
    });
    const result = await call();
    expect(result.status).toBe('succeeded');
    const links = (result.observation?.artifacts ?? []) as readonly Link[];
    expect(links.map((l) => [l.kind, l.mediaType, l.sizeBytes])).toEqual([
      ['image', 'image/png', PNG.length],
      ['audio', 'audio/wav', WAV.length],
      ['resource', 'application/pdf', PDF.length],
    ]);
    expect(links[2]?.uri).toBe('file:///r.pdf');
    const text = result.observation?.text ?? '';
    expect(text).toContain('here is the picture');
    for (const l of links) expect(text).toContain(`artifact ${l.artifactId}`);
    expect(text).toContain(
      `[image image/png, ${PNG.length} bytes, artifact ${links[0]?.artifactId}]`,
    );
    expect(text).toContain('[resource https://example.test/x]');

    const observationStep = result.steps.find((s) => s.kind === 'observation');
    for (const [link, bytes] of [
      [links[0], PNG],
      [links[1], WAV],
      [links[2], PDF],
    ] as const) {
      const stored = await getArtifact(server.mesh.db, link?.artifactId ?? '');
      expect(stored?.runId).toBe(result.runId);
      expect(stored?.stepSeq).toBe(observationStep?.seq);
      expect(Buffer.from(stored?.content ?? new Uint8Array()).equals(bytes)).toBe(true);
      expect(Number(stored?.sizeBytes)).toBe(bytes.length);
      expect(stored?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  it('reports a result the SDK refuses for bad base64 as a tool error the turn survives, storing nothing', async () => {
    // The official client validates base64 itself and refuses the whole result; Mesh's own
    // decoder (unit-tested in src/app/mcp-content.test.ts) names the block and keeps the rest.
    mcp.state.call = () => ({
      content: [
        { type: 'image', data: 'not*base64!', mimeType: 'image/png' },
        { type: 'text', text: 'still here' },
      ],
    });
    const result = await call();
    expect(result.status).toBe('succeeded');
    expect(result.observation?.kind).toBe('tool_error');
    expect(result.observation?.text).toMatch(/"content",\s*0,\s*"data"[\s\S]*Invalid Base64/);
    expect(result.observation?.artifacts).toBeUndefined();
  });

  it('serves an artifact with its own type and nosniff, and SVG or unknown types as attachments', async () => {
    mcp.state.call = () => ({
      content: [
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        { type: 'image', data: SVG.toString('base64'), mimeType: 'image/svg+xml' },
      ],
    });
    const result = await call();
    const [png, svg] = (result.observation?.artifacts ?? []) as readonly Link[];
    const base = `${server.url}api/runs/${result.runId}/artifacts`;
    const auth = { authorization: `Bearer ${server.token}` };

    const meta = await server.api('GET', `/api/runs/${result.runId}/artifacts/${png?.artifactId}`);
    expect(meta.json).toMatchObject({ media_type: 'image/png', size_bytes: PNG.length });

    const bytes = await fetch(`${base}/${png?.artifactId}/content`, { headers: auth });
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get('content-type')).toBe('image/png');
    expect(bytes.headers.get('x-content-type-options')).toBe('nosniff');
    expect(bytes.headers.get('content-length')).toBe(String(PNG.length));
    expect(Buffer.from(await bytes.arrayBuffer()).equals(PNG)).toBe(true);

    const script = await fetch(`${base}/${svg?.artifactId}/content`, { headers: auth });
    expect(script.headers.get('content-type')).toBe('application/octet-stream');
    expect(script.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(script.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await script.arrayBuffer()).equals(SVG)).toBe(true);

    const other = await fetch(`${base}/${png?.artifactId}/content`);
    expect(other.status).toBe(401);
  });

  it('shows images inline, audio with controls and blobs as downloads on the run page', async () => {
    mcp.state.call = () => ({
      content: [...MEDIA],
    });
    const result = await call();
    const [png, wav, pdf] = (result.observation?.artifacts ?? []) as readonly Link[];
    const { cookie } = await signIn(server);
    const page = await fetch(`${server.url}runs/${result.runId}`, { headers: { cookie } });
    const html = await page.text();
    const src = (id: string | undefined) => `/runs/${result.runId}/artifacts/${id}`;
    expect(html).toContain(`<img src="${src(png?.artifactId)}"`);
    expect(html).toContain(`<audio controls src="${src(wav?.artifactId)}"`);
    expect(html).toContain(`href="${src(pdf?.artifactId)}"`);
    expect(html).toContain(`${PDF.length} bytes`);
    expect(page.headers.get('content-security-policy')).toContain("img-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("media-src 'self'");

    const image = await fetch(server.url + src(png?.artifactId).slice(1), { headers: { cookie } });
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
    const signedOut = await fetch(server.url + src(png?.artifactId).slice(1), {
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(303);
  });

  it('adds the images of a tool round to the next model request only when the model accepts images', async () => {
    const fake = await startFakeChatCompletions();
    try {
      const provider = await insertModelProvider(server.mesh.db, {
        id: randomUUID(),
        name: 'vision-fake',
        kind: 'openai_compatible',
        baseUrl: fake.baseUrl,
        script: null,
      });
      await server.mesh.secrets.capture({
        ownerType: 'model_provider',
        ownerId: provider.id,
        kind: 'api_key',
        value: 'sk-test-vision-0123',
      });
      const create = async (name: string, imageInput?: boolean) => {
        const made = await server.api('POST', '/api/agents', {
          name,
          provider: 'vision-fake',
          model: 'fake-model',
          ...(imageInput === undefined ? {} : { image_input: imageInput }),
        });
        expect(made.status).toBe(201);
        expect(made.json).toMatchObject({ image_input: imageInput ?? false });
        const agent = await requireAgent(server.mesh, name);
        await connectAgent(server.mesh, agent, 'cam', 'tok');
        return agent;
      };
      const vision = await create('vision', true);
      const plain = await create('plain');
      const toggled = await server.api('PUT', '/api/agents/plain/image-input', {
        image_input: true,
      });
      expect(toggled.json).toMatchObject({ image_input: true });
      await server.api('PUT', '/api/agents/plain/image-input', { image_input: false });

      mcp.state.call = () => ({
        content: [
          { type: 'text', text: 'snapped' },
          { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        ],
      });
      const turn = async (agent: AgentRecord) => {
        const before = fake.requests.length;
        fake.enqueue(
          {
            kind: 'completion',
            toolCalls: [{ id: `call_${agent.name}`, name: 'cam__snap', arguments: '{}' }],
          },
          { kind: 'completion', content: 'I see a pixel.' },
        );
        const done = await chat(server.mesh, { agentId: agent.id, actor: 'u', body: 'look' });
        expect(done.status).toBe('succeeded');
        const second = fake.requests.slice(before)[1]?.json as {
          messages: { role: string; content: unknown }[];
        };
        return { run: done.runId, messages: second.messages };
      };

      const seen = await turn(vision);
      const roles = seen.messages.map((m) => m.role);
      const toolAt = roles.lastIndexOf('tool');
      const user = seen.messages[toolAt + 1] as {
        role: string;
        content: { type: string; text?: string; image_url?: { url: string } }[];
      };
      expect(user.role).toBe('user');
      expect(user.content[0]?.text).toMatch(/^The images the tool calls above returned/);
      expect(user.content[1]).toEqual({
        type: 'image_url',
        image_url: { url: `data:image/png;base64,${PNG_BASE64}` },
      });
      const steps = await server.mesh.ledger.steps(seen.run);
      const request = steps.filter((s) => s.kind === 'model_request')[1];
      expect(request && 'data' in request ? request.data['images'] : undefined).toBe(1);

      const blind = await turn(plain);
      expect(JSON.stringify(blind.messages)).not.toContain('image_url');
      const afterTools = blind.messages.slice(
        blind.messages.map((m) => m.role).lastIndexOf('tool'),
      );
      expect(afterTools.map((m) => m.role)).toEqual(['tool', 'system']);
    } finally {
      await fake.close();
    }
  });
});
