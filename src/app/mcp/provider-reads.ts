import { listToolProviders as listToolProviderRows } from '../../store/mcp.ts';
import type { Mesh } from '../mesh.ts';
import type { ToolProviderRecord } from '../records.ts';

/* The reads of remote tool providers (MCP servers) that the faces make. */

export function listToolProviders(mesh: Mesh): Promise<ToolProviderRecord[]> {
  return listToolProviderRows(mesh.db);
}
