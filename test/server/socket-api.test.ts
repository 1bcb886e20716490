import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnSocket, type SocketServer } from '../../src/server/socket-server.ts';
import { testDatabases, type TestDatabase } from '../support/db.ts';
import { openServerWithAgent, type TestServer } from '../support/server.ts';

/*
 * The CLI's socket serves the HTTP API itself: the same routes, validation and refusals as over
 * TCP, with the owner-only socket file as the credential. Every request below is sent both ways
 * and answered alike (the request id aside).
 */

interface Answer {
  readonly status: number;
  readonly json: unknown;
}

function overSocket(
  path: string,
  method: string,
  target: string,
  body?: { type: string; bytes: Uint8Array | string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: path,
        method,
        path: target,
        headers: { host: 'mesh.sock', ...(body ? { 'content-type': body.type } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.once('error', reject);
    req.end(body?.bytes);
  });
}

/** An answer without the parts that differ by request (its id). */
function comparable(answer: Answer): Answer {
  const json = answer.json as { error?: Record<string, unknown> } | undefined;
  if (!json?.error) return answer;
  const { request_id: _id, ...error } = json.error;
  return { status: answer.status, json: { error } };
}

describe('the API on the CLI socket', () => {
  let server: TestServer;
  let close: () => Promise<void>;
  let socket: SocketServer;
  const home = mkdtempSync(join(tmpdir(), 'mesh-socket-api-'));
  const path = join(home, 'mesh.sock');
  beforeAll(async () => {
    ({ server, close } = await openServerWithAgent(testDatabases()[0] as TestDatabase, 'ada'));
    socket = await listenOnSocket(server.mesh, path, { log: () => {}, version: 'test' });
  });
  afterAll(async () => {
    await socket.close();
    await close();
    rmSync(home, { recursive: true, force: true });
  });

  const both = async (
    method: string,
    target: string,
    body?: { type: string; bytes: string },
  ): Promise<[Answer, Answer]> => {
    const tcp = await server.api(method, target, undefined, {
      ...(body ? { raw: body.bytes, headers: { 'content-type': body.type } } : {}),
    });
    return [
      comparable(await overSocket(path, method, target, body)),
      comparable({ status: tcp.status, json: tcp.json }),
    ];
  };

  it('answers reads as over TCP, without a bearer token', async () => {
    const [viaSocket, viaTcp] = await both('GET', '/api/agents');
    expect(viaSocket.status).toBe(200);
    expect(viaSocket).toEqual(viaTcp);
    expect(JSON.stringify(viaSocket.json)).toContain('"ada"');
  });

  it('refuses a malformed body, a wrong media type, a bad field and an unknown path alike', async () => {
    const cases: [string, string, { type: string; bytes: string } | undefined, number, string][] = [
      [
        'PATCH',
        '/api/agents/ada',
        { type: 'application/json', bytes: '{"model": ' },
        400,
        'invalid_json',
      ],
      [
        'PATCH',
        '/api/agents/ada',
        { type: 'text/plain', bytes: '{}' },
        415,
        'unsupported_media_type',
      ],
      [
        'PATCH',
        '/api/agents/ada',
        { type: 'application/json', bytes: '{"model": 5}' },
        400,
        'invalid_body',
      ],
      [
        'PATCH',
        '/api/agents/ada',
        { type: 'application/json', bytes: '{"colour": "red"}' },
        400,
        'invalid_body',
      ],
      ['GET', '/api/runs?status=sleeping', undefined, 400, 'invalid_input'],
      ['GET', '/api/nothing-here', undefined, 404, 'route_not_found'],
      [
        'PATCH',
        '/api/agents/ghost',
        { type: 'application/json', bytes: '{"persona": "x"}' },
        404,
        'agent_not_found',
      ],
    ];
    for (const [method, target, body, status, code] of cases) {
      const [viaSocket, viaTcp] = await both(method, target, body);
      expect(viaSocket).toEqual(viaTcp);
      expect(viaSocket.status).toBe(status);
      expect((viaSocket.json as { error: { code: string } }).error.code).toBe(code);
    }
  });

  it('serves the API and nothing else on the socket: no pages, no route beside the API', async () => {
    for (const target of ['/', '/agents', '/cli/use-cases/mcp.list']) {
      const answer = await overSocket(path, 'POST', target, {
        type: 'application/json',
        bytes: '{}',
      });
      expect(answer.status, target).toBe(404);
    }
    const listed = await overSocket(path, 'GET', '/api/mcp/providers', undefined);
    expect(listed.status).toBe(200);
  });
});
