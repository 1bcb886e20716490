/**
 * node --import tsx scripts/mcp-conformance-client.ts <server-url>
 * The client under test of the official MCP conformance suite (see scripts/mcp-conformance.ts):
 * Mesh's own session and OAuth code behind the egress-guarded fetch, doing what each scenario
 * expects. The suite names the scenario in MCP_CONFORMANCE_SCENARIO and passes pre-registered
 * client credentials, when a scenario has them, in MCP_CONFORMANCE_CONTEXT.
 */
import {
  computeScopeUnion,
  extractWWWAuthenticateParams,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import { createGuardedFetch, type GuardedFetch } from '../src/egress/guarded-fetch.ts';
import { accessToken, beginAuthorization, finishAuthorization } from '../src/mcp/oauth.ts';
import type { OAuthFlowOptions, OAuthState } from '../src/mcp/oauth-state.ts';
import { openMcpSession, type McpSession } from '../src/mcp/session.ts';

/** Where the operator's browser would land; never contacted, the code is read off the redirect. */
const REDIRECT_URL = 'http://localhost:3000/oauth/callback';
/** The client ID metadata document the CIMD scenario expects (SEP-991); only used where offered. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Authorizations to try for one run before giving up (a server that never accepts any). */
const MAX_AUTHORIZATIONS = 3;

const serverUrl = process.argv[2] ?? '';
if (serverUrl === '') throw new Error('usage: mcp-conformance-client.ts <server-url>');
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '';
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as {
  client_id?: string;
  client_secret?: string;
};

const guarded = createGuardedFetch({ allowLoopbackHttp: true });

/** The last 401/403 challenge the MCP server answered with. */
let challenge: ReturnType<typeof extractWWWAuthenticateParams> | undefined;
const mcpFetch: GuardedFetch = async (url, init) => {
  const response = await guarded(url, init);
  if (response.status === 401 || response.status === 403)
    challenge = extractWWWAuthenticateParams(response);
  return response;
};

let saved: OAuthState = {};
const flow: OAuthFlowOptions = {
  serverUrl,
  store: {
    load: async () => saved,
    save: async (state) => {
      saved = state;
    },
  },
  redirectUrl: REDIRECT_URL,
  fetch: guarded,
  clientName: 'Mesh conformance client',
  clientMetadataUrl: CLIENT_METADATA_URL,
  ...(context.client_id === undefined
    ? {}
    : { preRegistered: { client_id: context.client_id, client_secret: context.client_secret } }),
};

function describe(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
}

/** What every scenario wants of a connected client: list the tools and call the one offered. */
async function exercise(session: McpSession): Promise<void> {
  console.log(`[${scenario}] connected, protocol ${session.protocolVersion ?? 'unknown'}`);
  const { tools } = await session.listTools();
  console.log(`[${scenario}] tools: ${tools.map((t) => t.name).join(', ') || 'none'}`);
  const tool = tools[0];
  if (!tool) return;
  const args = tool.name === 'add_numbers' ? { a: 5, b: 3 } : {};
  console.log(`[${scenario}] ${tool.name}: ${describe(await session.callTool(tool.name, args))}`);
}

/** Authorizes as the challenge asks: its scope joined to what was asked and granted before. */
let requestedScope: string | undefined;
async function authorize(found: NonNullable<typeof challenge>): Promise<void> {
  requestedScope = computeScopeUnion(requestedScope, saved.tokens?.scope, found.scope);
  const { authorizationUrl } = await beginAuthorization({
    ...flow,
    ...(requestedScope ? { scope: requestedScope } : {}),
    ...(found.resourceMetadataUrl ? { resourceMetadataUrl: found.resourceMetadataUrl } : {}),
  });
  // No human: the test authorization server approves at once and redirects with the code.
  const response = await guarded(authorizationUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location === null) throw new Error(`the authorization endpoint answered ${response.status}`);
  const callback = new URL(location, authorizationUrl).searchParams;
  const iss = callback.get('iss');
  await finishAuthorization({
    ...flow,
    code: callback.get('code') ?? '',
    state: callback.get('state') ?? '',
    ...(iss === null ? {} : { iss }),
  });
  console.log(`[${scenario}] authorized${requestedScope ? ` for ${requestedScope}` : ''}`);
}

/** Runs the scenario, answering each authorization challenge (a limited number of times). */
async function run(): Promise<void> {
  for (let authorizations = 0; ; authorizations++) {
    challenge = undefined;
    try {
      const session = await openMcpSession({
        url: serverUrl,
        token: () => accessToken(flow),
        fetch: mcpFetch,
      });
      try {
        await exercise(session);
      } finally {
        await session.close();
      }
      return;
    } catch (error) {
      if (challenge === undefined || authorizations >= MAX_AUTHORIZATIONS) throw error;
      await authorize(challenge);
    }
  }
}

try {
  await run();
} catch (error) {
  console.error(`[${scenario}] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
