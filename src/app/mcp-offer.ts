import {
  bindingInScope,
  catalogStale,
  judgeRemoteTool,
  unreadableCatalog,
  type RemoteScope,
} from '../policy/remote-offer.ts';
import type { Withheld } from '../policy/offer.ts';
import { listBindings, listMcpTools } from '../store/mcp.ts';
import type { Definition } from '../tool/definition.ts';
import { checkCatalog } from './mcp-catalog.ts';
import { checkedDefinition } from './mcp-remote-definition.ts';
import type { Mesh } from './mesh.ts';

/** The remote tools an agent's turn (or an operator's call) may use, and why others may not. */
export interface RemoteOffer {
  readonly definitions: readonly Definition[];
  readonly withheld: readonly Withheld[];
}

/**
 * The remote definitions of an agent's bindings for one conversation. Catalogs past their
 * freshness are re-checked first; a binding whose check fails offers nothing this turn.
 */
export async function remoteOffer(
  mesh: Mesh,
  agentId: string,
  scope: RemoteScope & {
    /**
     * When a catalog cannot be re-checked: `withhold` its tools (a turn), or use them as last
     * seen with effect semantics (an operator's explicit call: no definition can be trusted to
     * be unchanged, so none keeps query semantics).
     */
    onCheckFailure?: 'withhold' | 'last_seen';
  },
): Promise<RemoteOffer> {
  const definitions: Definition[] = [];
  const withheld: Withheld[] = [];
  for (const binding of await listBindings(mesh.db, agentId)) {
    const provider = binding.provider;
    const inScope = bindingInScope(binding, scope);
    let unchecked = false;
    if (inScope && catalogStale(binding, mesh.clock.now())) {
      try {
        await checkCatalog(mesh, agentId, provider);
      } catch (error) {
        if (scope.onCheckFailure !== 'last_seen') {
          withheld.push(
            unreadableCatalog(provider.slug, error instanceof Error ? error.message : 'failure'),
          );
          continue;
        }
        unchecked = true;
      }
    }
    for (const tool of await listMcpTools(mesh.db, agentId, provider.id)) {
      const verdict = judgeRemoteTool(provider.slug, binding, tool, inScope);
      if ('absent' in verdict) continue;
      if ('withhold' in verdict) {
        withheld.push(verdict.withhold);
        continue;
      }
      const checked = checkedDefinition(
        mesh,
        provider,
        unchecked ? { ...tool, legacyQueryFingerprint: null } : tool,
      );
      if ('refused' in checked) {
        withheld.push({
          name: verdict.offer,
          reason: `its definition was refused: ${checked.refused}`,
        });
        continue;
      }
      definitions.push(checked.definition);
    }
  }
  return { definitions, withheld };
}
