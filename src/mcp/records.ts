import type { JsonObject } from '../model/json.ts';
import type { Audience } from '../policy/audience.ts';

/*
 * The records of remote MCP servers and agents' connections to them, as the catalog logic reads
 * them: defined here, implemented by src/store/mcp.ts (as src/run/records.ts is by the run store).
 */

/** The longest request timeout an operator may set on a server, in seconds. */
export const MAX_MCP_TIMEOUT_SECONDS = 3600;

/** A registered remote MCP server (a `tool_providers` row of kind `mcp`). */
export interface ToolProviderRecord {
  readonly id: string;
  readonly slug: string;
  readonly url: string;
  readonly allowLoopbackHttp: boolean;
  /** How long one request to the server may take before it fails (connect, list, call). */
  readonly requestTimeoutMs: number;
  readonly createdAt: Date;
}

/** An agent's connection to a provider, with its exclusions and scopes. */
export interface BindingRecord {
  readonly agentId: string;
  readonly providerId: string;
  readonly authKind: 'bearer' | 'oauth';
  readonly excludedTools: readonly string[];
  readonly audiences: readonly Audience[] | null;
  readonly conversationIds: readonly string[] | null;
  readonly catalogCheckedAt: Date | null;
  readonly catalogFreshUntil: Date | null;
  readonly catalogError: string | null;
  readonly createdAt: Date;
}

/** One remote tool as a binding's account last saw it. */
export interface McpToolRecord {
  readonly toolName: string;
  readonly definition: JsonObject;
  readonly fingerprint: string;
  readonly previousFingerprint: string | null;
  readonly legacyQueryFingerprint: string | null;
  readonly reviewedFingerprint: string | null;
  readonly firstSeenAt: Date;
  readonly changedAt: Date;
  readonly removedAt: Date | null;
}
