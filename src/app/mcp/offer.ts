import {
  bindingInScope,
  catalogStale,
  judgeRemoteTool,
  unreadableCatalog,
  type RemoteScope,
} from '../../policy/remote-offer.ts';
import type { Withheld } from '../../policy/offer.ts';
import { listBindings, listMcpTools } from '../../store/mcp.ts';
import type { Definition } from '../../tool/definition.ts';
import { scheduleCatalogCheck } from './catalog.ts';
import { warmSession } from './credentials.ts';
import { checkedDefinition } from './remote-definition.ts';
import type { Mesh } from '../mesh.ts';

/** The remote tools an agent's turn (or an operator's call) may use, and why others may not. */
export interface RemoteOffer {
  readonly definitions: readonly Definition[];
  readonly withheld: readonly Withheld[];
}

/**
 * The remote definitions of an agent's bindings for one conversation, built from the catalogs as
 * last recorded: nothing here waits for a server. A catalog past its freshness (or whose last
 * check failed) is re-checked in the background, every binding on its own, and its tools are
 * offered as last seen with effect semantics meanwhile: a definition not confirmed within its
 * freshness cannot be trusted to be unchanged, so none keeps query semantics. A binding whose
 * last check failed, or whose catalog was never read, offers nothing on a turn and says why; an
 * operator's explicit call (`last_seen`) still uses what was last seen, as effects.
 */
export async function remoteOffer(
  mesh: Mesh,
  agentId: string,
  scope: RemoteScope & {
    /**
     * When a catalog's last check failed: `withhold` its tools (a turn), or use them as last
     * seen with effect semantics (an operator's explicit call).
     */
    onCheckFailure?: 'withhold' | 'last_seen';
    /** Opens the session of each binding that offers tools, if it has none yet (a turn's). */
    warm?: boolean;
  },
): Promise<RemoteOffer> {
  const definitions: Definition[] = [];
  const withheld: Withheld[] = [];
  const bindings = await listBindings(mesh.reads.db, agentId);
  const tools = await Promise.all(
    bindings.map((b) => listMcpTools(mesh.reads.db, agentId, b.provider.id)),
  );
  bindings.forEach((binding, index) => {
    const provider = binding.provider;
    const inScope = bindingInScope(binding, scope);
    const failed = binding.catalogError !== null;
    const stale = catalogStale(binding, mesh.clock.now());
    if (inScope && (stale || failed)) void scheduleCatalogCheck(mesh, agentId, provider);
    if (inScope && binding.catalogCheckedAt === null) {
      withheld.push(unreadableCatalog(provider.slug, 'it has not been listed yet'));
      return;
    }
    if (inScope && failed && scope.onCheckFailure !== 'last_seen') {
      withheld.push(unreadableCatalog(provider.slug, binding.catalogError ?? 'failure'));
      return;
    }
    const unconfirmed = stale || failed;
    const before = definitions.length;
    for (const tool of tools[index] ?? []) {
      const verdict = judgeRemoteTool(provider.slug, binding, tool, inScope);
      if ('absent' in verdict) continue;
      if ('withhold' in verdict) {
        withheld.push(verdict.withhold);
        continue;
      }
      const checked = checkedDefinition(
        mesh,
        provider,
        unconfirmed ? { ...tool, legacyQueryFingerprint: null } : tool,
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
    if (scope.warm === true && definitions.length > before) warmSession(mesh, agentId, provider);
  });
  return { definitions, withheld };
}
