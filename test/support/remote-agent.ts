import { requireAgent } from '../../src/app/agents/agents.ts';
import { connectAgent } from '../../src/app/mcp/connections.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { callToolAsOperator, type OperatorCallResult } from '../../src/app/runs/operator-call.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import type { InstanceKey } from '../../src/secrets/index.ts';
import type { Db } from '../../src/store/db.ts';
import type { TestDatabase } from './db.ts';
import { startFakeMcpServer, type FakeMcpServer, type FakeMcpState } from './mcp-server.ts';
import { scriptedAgent, testInstanceKey } from './turn.ts';

/**
 * A Mesh on a fresh database with the agent `ada` connected to one real MCP server (the official
 * SDK's, on loopback) under `slug`: what the remote-tool tests start from.
 */
export interface RemoteAgent {
  /** The Mesh in use; {@link restart} replaces it. */
  readonly mesh: Mesh;
  readonly db: Db;
  readonly server: FakeMcpServer;
  readonly agentId: string;
  /** Calls one of ada's tools as an operator, with `args` as its JSON arguments. */
  call(tool: string, args: unknown): Promise<OperatorCallResult>;
  /** A new Mesh over the same database and instance key: what a restarted server reads. */
  restart(): Promise<Mesh>;
  close(): Promise<void>;
}

export async function openRemoteAgent(
  database: TestDatabase,
  options: {
    readonly slug: string;
    readonly server: Partial<FakeMcpState>;
    readonly timeoutSeconds?: number;
  },
): Promise<RemoteAgent> {
  const opened = await database.open();
  const key: InstanceKey = testInstanceKey();
  let mesh = assembleMesh(opened.db, key);
  const server = await startFakeMcpServer(options.server);
  const agentId = await scriptedAgent(mesh, { fallback: { content: 'x' } }, 'ada');
  await addToolProvider(mesh, {
    slug: options.slug,
    url: server.url,
    allowLoopbackHttp: true,
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
  });
  await connectAgent(mesh, await requireAgent(mesh, agentId), options.slug, 'tok');
  return {
    get mesh() {
      return mesh;
    },
    db: opened.db,
    server,
    agentId,
    call: (tool, args) =>
      callToolAsOperator(mesh, {
        agent: 'ada',
        tool,
        arguments: JSON.stringify(args),
        operator: 'test',
      }),
    async restart() {
      await mesh.mcp.close();
      mesh = assembleMesh(opened.db, key);
      return mesh;
    },
    async close() {
      await server.close();
      await mesh.mcp.close();
      await opened.dispose();
    },
  };
}
