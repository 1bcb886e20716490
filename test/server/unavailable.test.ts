import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { freshPostgresUrl } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * A TCP relay to the real PostgreSQL server that can be cut and restored, so the test sees the
 * database go away under a running Mesh as an operator would (a failover, a restart).
 */
class Relay {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;
  constructor(
    readonly host: string,
    readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((inbound) => {
      const outbound = connect(this.targetPort, this.host);
      for (const s of [inbound, outbound]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Stops accepting and drops every open connection. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

describe.skipIf(!process.env['DATABASE_URL'])('a database that goes away', () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let relay: Relay;
  let server: TestServer;

  beforeAll(async () => {
    fresh = await freshPostgresUrl();
    const target = new URL(fresh.url);
    relay = new Relay(target.hostname, Number(target.port || 5432));
    await relay.start();
    const url = new URL(fresh.url);
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    const db = await openPostgres({ url: url.toString(), connectTimeoutMs: 2000 });
    await migrate(db);
    server = await startTestServer(db);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await relay?.cut();
    await fresh?.drop();
  });

  it('answers 503 with Retry-After and retryable while it is gone, and serves again when it is back', async () => {
    expect((await server.api('GET', '/api/agents')).status).toBe(200);

    await relay.cut();
    const down = await server.api('GET', '/api/agents');
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.json).toMatchObject({
      error: { code: 'database_unreachable', retryable: true },
    });
    // The answer names the database's address, never its credentials or a statement.
    const message = (down.json as { error: { message: string } }).error.message;
    expect(message).toMatch(/^lost PostgreSQL at 127\.0\.0\.1:\d+\//);
    expect(message).not.toMatch(/select|postgres:\/\//i);

    await relay.start();
    expect((await server.api('GET', '/api/agents')).status).toBe(200);
  });
});
