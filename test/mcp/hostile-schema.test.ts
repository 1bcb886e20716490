import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/app/agents.ts';
import { connectAgent } from '../../src/app/mcp-connections.ts';
import { addToolProvider } from '../../src/app/mcp-providers.ts';
import { callToolAsOperator } from '../../src/app/operator-call.ts';
import { agentRegistry } from '../../src/app/policy.ts';
import { assembleMesh, type Mesh } from '../../src/app/mesh.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

/**
 * A remote server's tool schema is input Mesh does not control. A pattern that backtracks
 * catastrophically on V8's engine (`^(a+)+$`) froze every request for seconds on a 28-character
 * argument; remote schemas are now matched by a linear-time engine.
 */
describe.each(testDatabases())(
  'a remote schema with a catastrophic pattern, on $name',
  (database) => {
    let mesh: Mesh;
    let dispose: () => Promise<void>;
    let server: FakeMcpServer;
    let probe: Server;
    let probeUrl: string;

    beforeAll(async () => {
      const opened = await database.open();
      dispose = () => opened.dispose();
      mesh = assembleMesh(opened.db, testInstanceKey());
      server = await startFakeMcpServer({
        tools: [
          textTool('match', 'Match a word', {
            inputSchema: {
              type: 'object',
              properties: { word: { type: 'string', pattern: '^(a+)+$' } },
              patternProperties: { '^(x+x+)+y$': { type: 'string' } },
            },
          }),
          textTool('peek', 'Peek ahead', {
            inputSchema: {
              type: 'object',
              properties: { word: { type: 'string', pattern: '^(?=a)a+$' } },
            },
          }),
        ],
      });
      const agent = await requireAgent(
        mesh,
        await scriptedAgent(mesh, { fallback: { content: 'x' } }, 'ada'),
      );
      await addToolProvider(mesh, { slug: 'hostile', url: server.url, allowLoopbackHttp: true });
      await connectAgent(mesh, agent, 'hostile', 'tok');
      // Another request this process serves: answered at once, unless the event loop is frozen.
      probe = createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;
    }, 60_000);

    afterAll(async () => {
      await new Promise((resolve) => probe?.close(resolve));
      await server?.close();
      await mesh?.mcp.close();
      await dispose?.();
    });

    const call = (tool: string, args: unknown) =>
      callToolAsOperator(mesh, {
        agent: 'ada',
        tool,
        arguments: JSON.stringify(args),
        operator: 'test',
      });

    it('matches the pattern as the schema means it', async () => {
      const ok = await call('hostile__match', { word: 'aaaa' });
      expect(ok.status).toBe('succeeded');
      expect(ok.observation?.text).toBe('match got {"word":"aaaa"}');
      const refused = await call('hostile__match', { word: 'aab' });
      expect(refused.observation?.kind).toBe('invalid_input');
      expect(refused.observation?.text).toContain('word');
    });

    it('answers other requests within 100 ms while a hostile argument is validated', async () => {
      // Each probe is answered before its 100 ms timer fires, for as long as the call runs; a
      // frozen loop fires the timer first (timers run before the poll phase that reads the answer).
      const events: string[] = [];
      let running = true;
      const probes = (async () => {
        while (running) {
          let fired = false;
          const timer = setTimeout(() => (fired = true), 100);
          const answer = await fetch(probeUrl).then((r) => r.text());
          clearTimeout(timer);
          events.push(fired ? 'timer fired first' : `probe ${answer}`);
        }
      })();
      const hostile = 'a'.repeat(40) + '!';
      const result = await call('hostile__match', {
        word: hostile,
        xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxz: 'v',
      });
      running = false;
      await probes;
      expect(result.observation?.kind).toBe('invalid_input');
      // The refusal names the field, never the value.
      expect(result.observation?.text).toContain('word');
      expect(result.observation?.text).not.toContain(hostile);
      expect(events.length).toBeGreaterThan(0);
      expect(events.filter((e) => e !== 'probe ok')).toEqual([]);
      // Nothing was sent to the server for the refused call.
      expect(server.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
    });

    it('withholds a tool whose pattern the linear-time engine cannot read, saying why', async () => {
      const agent = await requireAgent(mesh, 'ada');
      const { registry, withheld } = await agentRegistry(mesh, agent.id);
      expect(registry.get('hostile__peek')).toBeUndefined();
      const reason = withheld.find((w) => w.name === 'hostile__peek')?.reason ?? '';
      expect(reason).toMatch(
        /pattern .* is not supported: remote schemas are matched in linear time/,
      );
    });
  },
);
