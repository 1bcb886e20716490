import type { Definition, ToolHandler } from '../tool/definition.ts';
import { hasCode } from '../tool/errors.ts';
import {
  createRegistry,
  MESH_OWNED_PACKAGES,
  RegistryError,
  type Registry,
} from '../tool/registry.ts';
import { matchBindings } from './bindings.ts';
import type { Catalog } from './catalog.ts';
import { diagnostic, ManifestInvalidError, type Diagnostic } from './diagnostic.ts';
import type { PackageHook } from '../tool/hook.ts';
import { embeddedFiles } from './package-files.ts';
import { HOOK_NAMES, type HookName, type ToolPackage } from './package-manifest.ts';
import { checkPackageSet } from './package-set.ts';
import { readPackage, type ReadOptions } from './read-package.ts';
import { SchemaPool } from './schema-pool.ts';

/** Where the generated catalog lives, for diagnostics about the catalog itself. */
export const CATALOG_FILE = 'src/generated/catalog.ts';

/** The hook functions of one package, by juncture. */
export type PackageHooks = Readonly<Partial<Record<HookName, PackageHook>>>;

/** A verified first-party catalog: the registry, the packages it came from, and their hooks. */
export interface LoadedCatalog {
  readonly ok: true;
  readonly registry: Registry;
  readonly packages: readonly ToolPackage[];
  /** Bound hook functions by package id, for the lifecycle executor. */
  readonly hooks: ReadonlyMap<string, PackageHooks>;
}

/** The outcome of {@link verifyCatalog}. */
export type CatalogVerification =
  LoadedCatalog | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

type Options = Omit<ReadOptions, 'pool'>;

/** Bindings by package id and name, and the entries that repeat an earlier one. */
interface Grouped<T> {
  readonly byPackage: Map<string, Map<string, T>>;
  readonly repeats: { readonly field: string; readonly entry: T }[];
}

function group<T extends { packageId: string; name: string }>(
  entries: readonly T[],
  list: 'handlers' | 'hooks',
): Grouped<T> {
  const byPackage = new Map<string, Map<string, T>>();
  const repeats: { field: string; entry: T }[] = [];
  entries.forEach((entry, i) => {
    const byName = byPackage.get(entry.packageId) ?? new Map<string, T>();
    if (byName.has(entry.name)) repeats.push({ field: `${list}[${i}]`, entry });
    else byName.set(entry.name, entry);
    byPackage.set(entry.packageId, byName);
  });
  return { byPackage, repeats };
}

/** Parses every embedded package and checks digests and unreferenced embedded files. */
function readAll(catalog: Catalog, options: Options, diagnostics: Diagnostic[]): ToolPackage[] {
  const pool = new SchemaPool();
  const packages: ToolPackage[] = [];
  for (const entry of catalog.packages) {
    const displayRoot = `tools/${entry.folder}`;
    const result = readPackage(
      {
        folder: entry.folder,
        displayRoot,
        manifestText: entry.manifest,
        files: embeddedFiles(entry.schemas),
        fileHashes: entry.files,
        ...(entry.skill === undefined ? {} : { skillText: entry.skill }),
      },
      { ...options, pool },
    );
    if (!result.ok) {
      diagnostics.push(...result.diagnostics);
      continue;
    }
    const pkg = result.package;
    const id = pkg.manifest.package.id;
    for (const path of Object.keys(entry.schemas).sort()) {
      if (!Object.hasOwn(pkg.schemaFiles, path)) {
        diagnostics.push(
          diagnostic(
            'schema_unreferenced',
            `${displayRoot}/${path}`,
            '',
            'is embedded in the catalog but the manifest does not reference it',
            { package: id },
          ),
        );
      }
    }
    if (pkg.digest !== entry.digest || pkg.manifestSha256 !== entry.manifestSha256) {
      diagnostics.push(
        diagnostic(
          'digest_mismatch',
          pkg.manifestFile,
          '',
          `the digest recorded in ${CATALOG_FILE} does not match the embedded content; regenerate it with npm run build:catalog`,
          { package: id },
        ),
      );
    }
    packages.push(pkg);
  }
  return packages;
}

function definitionsOf(
  packages: readonly ToolPackage[],
  handlers: ReadonlyMap<string, ReadonlyMap<string, { fn: ToolHandler }>>,
): Definition[] {
  return packages.flatMap((pkg) => {
    const { id, version } = pkg.manifest.package;
    const origin = Object.freeze({
      source: 'first_party' as const,
      packageId: id,
      version,
      digest: pkg.digest,
    });
    return pkg.manifest.tools.map((tool): Definition => {
      const execute = handlers.get(id)?.get(tool.handler)?.fn;
      if (!execute) throw new Error(`unreachable: ${id}/${tool.handler} was verified as bound`);
      const base = {
        tool: { name: tool.name, description: tool.description, parameters: tool.parameters },
        class: tool.class,
        replay: tool.replay,
        needs: tool.needs,
        origin,
        execute,
        ...(tool.parks === true ? { parks: true } : {}),
      };
      return tool.outputSchema === undefined ? base : { ...base, outputSchema: tool.outputSchema };
    });
  });
}

/** Maps the registry's refusals back to the manifest entries they came from. */
function registryDiagnostics(error: RegistryError, packages: readonly ToolPackage[]): Diagnostic[] {
  return error.problems.map((problem) => {
    for (const pkg of packages) {
      const i = pkg.manifest.tools.findIndex((t) => t.name === problem.tool);
      const tool = pkg.manifest.tools[i];
      if (tool) {
        return diagnostic('registry_refused', pkg.manifestFile, `tools[${i}]`, problem.message, {
          package: pkg.manifest.package.id,
          tool: tool.name,
          handler: tool.handler,
        });
      }
    }
    return diagnostic('registry_refused', CATALOG_FILE, '', `${problem.tool}: ${problem.message}`);
  });
}

/**
 * Start-up verification of the generated catalog: parses and validates every embedded manifest
 * (without executing any package code), checks digests, ids and tool names across packages, and
 * the 1:1 match between manifests and bound handlers and hooks; then builds the Definitions and
 * the Registry. Returns every diagnostic on failure.
 */
export function verifyCatalog(catalog: Catalog, options: Options = {}): CatalogVerification {
  const diagnostics: Diagnostic[] = [];
  const packages = readAll(catalog, options, diagnostics);
  const failedReads = diagnostics.length > 0;
  diagnostics.push(...checkPackageSet(packages));
  const handlerGroups = group(catalog.handlers, 'handlers');
  const hookGroups = group(catalog.hooks, 'hooks');
  const handlers = handlerGroups.byPackage;
  const hooks = hookGroups.byPackage;
  const ids = new Set(packages.map((p) => p.manifest.package.id));
  // Bindings are keyed by package id: with a duplicated id they cannot be attributed, and the
  // duplicate is already refused.
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  for (const pkg of packages) {
    const id = pkg.manifest.package.id;
    if (seen.has(id)) duplicated.add(id);
    seen.add(id);
  }
  for (const { field, entry } of [...handlerGroups.repeats, ...hookGroups.repeats]) {
    if (duplicated.has(entry.packageId)) continue;
    diagnostics.push(
      diagnostic(
        'binding_duplicate',
        CATALOG_FILE,
        field,
        `${entry.packageId} binds ${entry.name} twice`,
        {
          package: entry.packageId,
          handler: entry.name,
        },
      ),
    );
  }
  for (const pkg of packages) {
    const id = pkg.manifest.package.id;
    if (duplicated.has(id)) continue;
    diagnostics.push(
      ...matchBindings(pkg, {
        handlers: new Set(handlers.get(id)?.keys()),
        hooks: new Set(hooks.get(id)?.keys()),
        handlersFile: `tools/${pkg.folder}/handlers.ts`,
        hooksFile: `tools/${pkg.folder}/hooks.ts`,
      }),
    );
  }
  // Bindings for a package that failed to read would only repeat that failure.
  if (!failedReads) {
    for (const [list, byPackage] of [
      ['handlers', handlers],
      ['hooks', hooks],
    ] as const) {
      for (const [packageId, names] of byPackage) {
        if (ids.has(packageId)) continue;
        for (const name of names.keys()) {
          diagnostics.push(
            diagnostic(
              'binding_extra',
              CATALOG_FILE,
              list,
              `${packageId}/${name} is bound but no package has id ${packageId}`,
              {
                package: packageId,
                handler: name,
              },
            ),
          );
        }
      }
    }
  }
  if (diagnostics.length > 0) return { ok: false, diagnostics };

  let registry: Registry;
  try {
    registry = createRegistry(definitionsOf(packages, handlers), {
      meshOwnedPackages: options.meshOwnedPackages ?? MESH_OWNED_PACKAGES,
    });
  } catch (error) {
    if (hasCode(error, RegistryError.code)) {
      return { ok: false, diagnostics: registryDiagnostics(error as RegistryError, packages) };
    }
    throw error;
  }
  const hookMap = new Map<string, PackageHooks>();
  for (const pkg of packages) {
    const bound: Partial<Record<HookName, PackageHook>> = {};
    for (const hook of HOOK_NAMES) {
      const name = pkg.manifest.hooks[hook];
      const fn = name === undefined ? undefined : hooks.get(pkg.manifest.package.id)?.get(name)?.fn;
      if (fn) bound[hook] = fn;
    }
    hookMap.set(pkg.manifest.package.id, Object.freeze(bound));
  }
  return Object.freeze({
    ok: true as const,
    registry,
    packages: Object.freeze(packages),
    hooks: hookMap,
  });
}

/**
 * Verifies the catalog and returns the registry, or throws {@link ManifestInvalidError}
 * (`manifest_invalid`) carrying every diagnostic: first-party packages fail closed at the process.
 */
export function loadCatalog(catalog: Catalog, options: Options = {}): LoadedCatalog {
  const result = verifyCatalog(catalog, options);
  if (!result.ok) throw new ManifestInvalidError(result.diagnostics);
  return result;
}
