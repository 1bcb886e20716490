import type { OAuthStateStore } from '../mcp/oauth.ts';
import type { CheckedDefinition } from './mcp-remote-definition.ts';

/**
 * What one Mesh keeps in memory for remote MCP: fields of the Mesh object, never module state, so
 * two Mesh objects in one process (tests, a CLI beside a server) share nothing.
 */
export interface McpRuntime {
  /** One OAuth state store per binding (`agentId:providerId`): concurrent refreshes share one. */
  readonly oauthStores: Map<string, OAuthStateStore>;
  /**
   * Checked definitions by (provider, tool, fingerprint, semantics): an unchanged remote tool is
   * compiled once, not at every turn.
   */
  readonly definitions: Map<string, CheckedDefinition>;
}

export function createMcpRuntime(): McpRuntime {
  return { oauthStores: new Map(), definitions: new Map() };
}
