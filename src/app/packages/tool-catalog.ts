import { catalog } from '../../generated/catalog.ts';
import type { ConfigField } from '../../manifest/package-manifest.ts';
import { loadCatalog, type LoadedCatalog } from '../../manifest/verify-catalog.ts';
import type { JsonSchema } from '../../model/json.ts';
import type { Definition } from '../../tool/definition.ts';

/*
 * The compiled-in catalog as `mesh tools list|show` read it: no database, no Mesh, so these
 * commands answer on a machine that has never run Mesh. Verified the same way start-up verifies it.
 */

function installed(): LoadedCatalog {
  return loadCatalog(catalog);
}

/** One installed tool, a line of `mesh tools list`. */
export interface ToolListing {
  readonly name: string;
  readonly class: Definition['class'];
  readonly replay: Definition['replay'];
  readonly needs: readonly string[];
  readonly package: string;
  readonly version: string;
}

/** One installed tool in full, as `mesh tools show` prints it. */
export interface ToolDetail {
  readonly name: string;
  readonly description: string;
  readonly class: Definition['class'];
  readonly replay: Definition['replay'];
  readonly needs: readonly string[];
  readonly package: { readonly id: string; readonly version: string; readonly digest: string };
  readonly parameters: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly config: readonly {
    readonly key: string;
    readonly disposition: ConfigField['disposition'];
    readonly type: ConfigField['type'];
  }[];
}

/** Every tool the compiled-in packages declare, in registry order. */
export function installedTools(): ToolListing[] {
  return installed()
    .registry.definitions()
    .map((d) => ({
      name: d.tool.name,
      class: d.class,
      replay: d.replay,
      needs: d.needs,
      package: d.origin.packageId,
      version: d.origin.version,
    }));
}

/** The installed tool with this name, or undefined. */
export function installedTool(name: string): ToolDetail | undefined {
  const { registry, packages } = installed();
  const d = registry.get(name);
  if (!d) return undefined;
  const pkg = packages.find((p) => p.manifest.package.id === d.origin.packageId);
  return {
    name: d.tool.name,
    description: d.tool.description,
    class: d.class,
    replay: d.replay,
    needs: d.needs,
    package: { id: d.origin.packageId, version: d.origin.version, digest: d.origin.digest },
    parameters: d.tool.parameters,
    ...(d.outputSchema ? { outputSchema: d.outputSchema } : {}),
    config: (pkg?.manifest.config ?? []).map((f) => ({
      key: f.key,
      disposition: f.disposition,
      type: f.type,
    })),
  };
}
