import type { JsonObject } from '../model/json.ts';
import type { McpToolRecord } from './records.ts';

/** A binding: one agent's connection to one remote server. */
export interface BindingKey {
  readonly agentId: string;
  readonly providerId: string;
}

/** A tool as a listing gave it: its definition, and that definition's fingerprint. */
export interface ListedTool {
  readonly name: string;
  readonly definition: JsonObject;
  readonly fingerprint: string;
}

/**
 * Where a binding's catalog is kept, as the catalog logic needs it; src/store/mcp.ts implements
 * it over the database.
 */
export interface McpCatalogStore {
  /** The binding's recorded tools, removed ones included. */
  tools(agentId: string, providerId: string): Promise<McpToolRecord[]>;
  /**
   * Records a listing: new tools inserted, changed ones updated (the old fingerprint kept as
   * previous), tools gone from it marked removed, the binding's check time and freshness set.
   */
  record(binding: BindingKey, tools: readonly ListedTool[], freshUntil: Date | null): Promise<void>;
  /** Records that a check failed, and why (no credential in the text). */
  recordError(binding: BindingKey, message: string): Promise<void>;
}
