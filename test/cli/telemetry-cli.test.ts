import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshMeshHome,
  meshEnv,
  meshIn,
  removeMeshHome,
  serveWith,
  type ServeProcess,
} from '../support/cli.ts';

/** OTLP/JSON as the exporter writes it: the parts this test reads. */
interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}

/** A loopback OTLP/HTTP collector: keeps every `POST /v1/traces` body it is sent. */
function startCollector(): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const json = req.headers['content-type']?.startsWith('application/json') === true;
      if (req.method === 'POST' && req.url === '/v1/traces' && json) {
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(404).end();
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, bodies });
    }),
  );
}

const value = (attributes: readonly OtlpAttribute[], key: string) => {
  const v = attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

const CANARY = 'canary-e2e-5b1d-not-for-traces';

describe('mesh serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  const home = freshMeshHome('mesh-otel-');
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let serve: ServeProcess;
  beforeAll(async () => {
    collector = await startCollector();
    serve = serveWith(
      {
        ...meshEnv(home),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'mesh-e2e',
      },
      '--port',
      '0',
      '--demo',
    );
    await serve.waitFor(/^URL: /);
  }, 60_000);
  afterAll(async () => {
    if (serve.child.exitCode === null) await serve.stop();
    await new Promise((resolve) => collector.server.close(resolve));
    await removeMeshHome(home);
  });

  it('exports the turn, its model requests and its tool call to the collector on stop', async () => {
    const chat = await meshIn(home)(
      'chat',
      '--agent',
      'demo',
      `remember that the vault code is ${CANARY}`,
    );
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain(CANARY);
    // Stopping flushes the batch: what the turn made is at the collector when the process exits.
    expect(await serve.stop()).toBe(0);

    const exports = collector.bodies.map((b) => JSON.parse(b) as OtlpExport);
    const resources = exports.flatMap((e) => e.resourceSpans);
    expect(resources.length).toBeGreaterThan(0);
    for (const { resource } of resources) {
      expect(value(resource.attributes, 'service.name')).toBe('mesh-e2e');
      expect(value(resource.attributes, 'service.version')).toMatch(/^\d+\.\d+\.\d+/);
    }
    const spans = resources.flatMap((r) =>
      r.scopeSpans.filter((s) => s.scope.name === 'mesh').flatMap((s) => s.spans),
    );
    const turn = spans.find((s) => s.name === 'invoke_agent demo');
    expect(turn).toBeDefined();
    if (!turn) return;
    expect(value(turn.attributes, 'mesh.run.status')).toBe('succeeded');
    const children = spans.filter((s) => s.parentSpanId === turn.spanId);
    expect(children.map((s) => s.name).sort()).toEqual([
      'chat scripted-demo',
      'chat scripted-demo',
      'execute_tool remember',
    ]);
    for (const child of children) expect(child.traceId).toBe(turn.traceId);
    const tool = children.find((s) => s.name === 'execute_tool remember');
    expect(value(tool?.attributes ?? [], 'mesh.tool.outcome')).toBe('result');
    expect(collector.bodies.join('\n')).not.toContain(CANARY);
  }, 60_000);
});
