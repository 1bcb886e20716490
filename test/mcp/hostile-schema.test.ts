import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshWorker } from '../../src/app/conversations/turns.ts';
import { catalogView } from '../../src/app/mcp/catalog.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { agentRegistry } from '../../src/app/packages/policy.ts';
import { getAgent } from '../../src/store/agents.ts';
import { doublingSchema } from '../support/hostile-schemas.ts';
import { testDatabases } from '../support/db.ts';
import { textTool } from '../support/mcp-server.ts';
import { openRemoteAgent, type RemoteAgent } from '../support/remote-agent.ts';

/** Another request this process serves: answered at once, unless the event loop is frozen. */
interface Probe {
  readonly url: string;
  close(): Promise<void>;
}

async function startProbe(): Promise<Probe> {
  const server: Server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A remote server's tool schema is input Mesh does not control. A pattern that backtracks
 * catastrophically on V8's engine (`^(a+)+$`) froze every request for seconds on a 28-character
 * argument; remote schemas are now matched by a linear-time engine.
 */
describe.each(testDatabases())(
  'a remote schema with a catastrophic pattern, on $name',
  (database) => {
    let remote: RemoteAgent;
    let probe: Probe;

    beforeAll(async () => {
      remote = await openRemoteAgent(database, {
        slug: 'hostile',
        server: {
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
        },
      });
      probe = await startProbe();
    }, 60_000);

    afterAll(async () => {
      await probe?.close();
      await remote?.close();
    });

    const call = (tool: string, args: unknown) => remote.call(tool, args);

    it('matches the pattern as the schema means it', async () => {
      const ok = await call('hostile__match', { word: 'aaaa' });
      expect(ok.status).toBe('succeeded');
      expect(ok.observation?.text).toBe('match got {"word":"aaaa"}');
      const refused = await call('hostile__match', { word: 'aab' });
      expect(refused.observation?.kind).toBe('invalid_input');
      expect(refused.observation?.text).toContain('word');
    });

    it('answers other requests while a hostile argument is validated, and refuses it', async () => {
      // On V8's backtracking engine this 41-character argument takes hours against ^(a+)+$, so the
      // call finishing at all is the proof the match is linear; the probes show other requests
      // are answered beside it. (No timing threshold: a loaded machine may be slow, not frozen.)
      const events: string[] = [];
      let running = true;
      const probes = (async () => {
        while (running) {
          const answer = await fetch(probe.url).then((r) => r.text());
          events.push(`probe ${answer}`);
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
      expect(remote.server.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
    });

    it('withholds a tool whose pattern the linear-time engine cannot read, saying why', async () => {
      const { registry, withheld } = await agentRegistry(remote.mesh, remote.agentId);
      expect(registry.get('hostile__peek')).toBeUndefined();
      const reason = withheld.find((w) => w.name === 'hostile__peek')?.reason ?? '';
      expect(reason).toMatch(
        /pattern .* is not supported: remote schemas are matched in linear time/,
      );
    });
  },
);

/**
 * A schema whose `$ref`s double per level: 39 definitions, each an anyOf of a `$ref` to the one
 * before and an allOf of the same `$ref`. Ajv checks a value against 2^39 subschemas (and, with
 * every error collected, keeps one object per visit): the server grew to 3.6 GB and stopped
 * answering. Remote schemas are now measured before they are compiled, and this one is withheld.
 */
describe.each(testDatabases())(
  'a remote schema whose refs double per level, on $name',
  (database) => {
    let remote: RemoteAgent;
    let probe: Probe;

    beforeAll(async () => {
      remote = await openRemoteAgent(database, {
        slug: 'nested',
        server: {
          tools: [
            textTool('nest', 'Nest values', {
              inputSchema: { type: 'object', ...doublingSchema(39) },
            }),
            textTool('plain', 'A plain tool', {
              inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
            }),
          ],
        },
      });
      probe = await startProbe();
    }, 60_000);

    afterAll(async () => {
      await probe?.close();
      await remote?.close();
    });

    it('withholds the tool at catalog time, naming the bound, and offers the rest', async () => {
      const { registry, withheld } = await agentRegistry(remote.mesh, remote.agentId);
      expect(registry.get('nested__nest')).toBeUndefined();
      expect(registry.get('nested__plain')).toBeDefined();
      const reason = withheld.find((w) => w.name === 'nested__nest')?.reason ?? '';
      expect(reason).toMatch(/expands to over 4096 subschemas per value checked/);
      const agent = await getAgent(remote.mesh.db, remote.agentId);
      const view = await catalogView(remote.mesh, agent!, 'nested');
      expect(view.tools.find((t) => t.name === 'nest')?.withheldReason).toBe(reason);
    });

    it('refuses a call to it while other requests are answered, and serves the plain tool', async () => {
      const events: string[] = [];
      let running = true;
      const probes = (async () => {
        while (running) {
          events.push(`probe ${await fetch(probe.url).then((r) => r.text())}`);
          if (events.length === 1) events.push('first probe answered');
        }
      })();
      // The hostile call waits for one probe to be answered first: the process is serving others.
      while (!events.includes('first probe answered')) await new Promise(setImmediate);
      const refused = await remote.call('nested__nest', { x: { a: 1 } }).then(
        (r) => `call ${r.status} ${r.observation?.kind ?? ''}`,
        (error: unknown) => `call refused ${(error as { code?: string }).code ?? ''}`,
      );
      events.push(refused);
      const plain = await remote.call('nested__plain', { word: 'hi' });
      running = false;
      await probes;
      expect(events.filter((e) => e.startsWith('call'))).toEqual([refused]);
      expect(refused).toMatch(/^call (refused|failed)/);
      expect(events.indexOf('first probe answered')).toBeLessThan(events.indexOf(refused));
      expect(plain.observation?.text).toBe('plain got {"word":"hi"}');
      expect(remote.server.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(1);
    });

    it('resumes a run whose process was killed mid-call without freezing again, after a restart', async () => {
      // What a process killed while checking the hostile call left: the run, leased to a holder
      // that is gone, its call not yet answered.
      const run = await remote.mesh.ledger.createRun({
        agentId: remote.agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'test' },
        budget: { maxToolCalls: 1, maxRounds: 1 },
        checkpoint: scriptCheckpoint([
          { id: 'op_hostile', name: 'nested__nest', arguments: '{"x":{"a":1}}' },
        ]),
        lease: { owner: 'killed-process', leaseMs: 60_000 },
      });
      await remote.db.query(
        `update runs set lease_expires_at = now() - interval '1 second' where id = $1`,
        [run.id],
      );
      // The restarted server: a new Mesh over the same database, its worker resuming the run.
      const mesh = await remote.restart();
      const events: string[] = [];
      const worker = meshWorker(mesh, () => undefined);
      const resumed = worker.runOnce().then(() => events.push('run resumed and settled'));
      events.push(`probe ${await fetch(probe.url).then((r) => r.text())}`);
      await resumed;
      // Both came back: the resumed run did not stop the process from answering, nor freeze it.
      expect(events.sort()).toEqual(['probe ok', 'run resumed and settled']);
      const ended = await mesh.ledger.run(run.id);
      expect(ended?.interruptions).toBe(1);
      expect(['succeeded', 'failed']).toContain(ended?.status);
      const steps = await mesh.ledger.steps(run.id);
      const observed = steps.find((s) => s.kind === 'observation');
      expect(JSON.stringify(observed?.observation ?? ended?.reason)).toMatch(/nested__nest/);
      expect(remote.server.received.filter((r) => r.tool === 'nest')).toHaveLength(0);
    });
  },
);
