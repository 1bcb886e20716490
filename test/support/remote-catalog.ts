import { createHash } from 'node:crypto';
import type { Definition } from '../../src/tool/definition.ts';
import { loadCatalog } from '../fixtures/mcp-catalog.ts';

/** The operator's slug for a fixture server (slugs are lowercase words joined by `_`). */
export function fixtureSlug(server: string): string {
  return server.replace(/-/g, '_');
}

/**
 * The fixture catalog's tools as the remote definitions a turn would be offered, named
 * `<slug>__<tool>`, without a server behind them: each call answers with its name and arguments.
 * The one tool that needs task-augmented calls is left out, as Mesh withholds it.
 */
export function catalogDefinitions(): Definition[] {
  return loadCatalog()
    .filter((t) => t.name !== 'simulate-research-query')
    .map((t) => {
      const slug = fixtureSlug(t.server);
      const name = `${slug}__${t.name}`;
      return {
        tool: { name, description: t.description, parameters: t.inputSchema },
        class: 'effect',
        replay: 'effectful',
        needs: [],
        origin: {
          source: 'remote',
          packageId: `mcp.${slug}`,
          version: '0',
          digest: createHash('sha256').update(JSON.stringify(t)).digest('hex'),
        },
        execute: async (_ctx, args) => ({ text: `${name} ran with ${JSON.stringify(args)}` }),
      } satisfies Definition;
    });
}
