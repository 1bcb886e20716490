import { satisfies, valid, validRange } from 'semver';
import type { Need } from '../tool/definition.ts';
import { describeTomlValue, type TomlTable } from './toml-document.ts';
import {
  HOOK_NAMES,
  IN_FLIGHT_POLICIES,
  type InFlightPolicy,
  type HookDeclarations,
  type HookName,
  type PackageIdentity,
  type PackageManifest,
  type ToolDeclaration,
} from './package-manifest.ts';
import { TableReader } from './table-reader.ts';
import { readConfig, type SecretProvider } from './validate-config.ts';
import { checkBindingName, readTool } from './validate-tools.ts';
import type { ValidationContext } from './validation-context.ts';
import { HOOK_PROTOCOL_VERSIONS, MANIFEST_VERSION, PACKAGE_ID_PATTERN } from './versioning.ts';
import { checkDescription } from './text-rules.ts';

/** Reads `manifest_version` first: a version this reader does not understand stops everything. */
function checkManifestVersion(root: TomlTable, ctx: ValidationContext): boolean {
  const value = root['manifest_version'];
  if (value === undefined) {
    ctx.sink.add(
      'field_missing',
      'manifest_version',
      `is required (this reader understands ${MANIFEST_VERSION})`,
    );
    return false;
  }
  if (value !== MANIFEST_VERSION) {
    ctx.sink.add(
      'manifest_version_unsupported',
      'manifest_version',
      `this reader understands manifest_version ${MANIFEST_VERSION} only; it refuses the package rather than guess (found ${describeTomlValue(value)})`,
    );
    return false;
  }
  return true;
}

/** semver's range parsing is slow and every package repeats the same few ranges. */
const rangeChecks = new Map<string, 'invalid' | 'satisfied' | 'unsatisfied'>();

function checkRange(range: string, version: string): 'invalid' | 'satisfied' | 'unsatisfied' {
  const key = `${range}\u0000${version}`;
  let verdict = rangeChecks.get(key);
  if (verdict === undefined) {
    if (validRange(range) === null) verdict = 'invalid';
    else verdict = satisfies(version, range) ? 'satisfied' : 'unsatisfied';
    // A pure function of its inputs; bounded so a hostile crawl cannot grow it without limit.
    if (rangeChecks.size < 1024) rangeChecks.set(key, verdict);
  }
  return verdict;
}

function readPackageSection(
  root: TableReader,
  ctx: ValidationContext,
): PackageIdentity | undefined {
  const r = root.table('package', { required: true });
  if (!r) return undefined;
  const id = r.string('id', { required: true });
  let idOk = id !== undefined;
  if (id !== undefined && !PACKAGE_ID_PATTERN.test(id)) {
    idOk = false;
    ctx.sink.add('package_id_invalid', r.at('id'), `must match ${PACKAGE_ID_PATTERN.source}`);
  }
  if (id !== undefined && idOk) ctx.sink.packageName = id;
  const version = r.string('version', { required: true });
  let versionOk = version !== undefined;
  if (version !== undefined && valid(version) !== version) {
    versionOk = false;
    ctx.sink.add('version_invalid', r.at('version'), 'must be a semver version such as 1.2.0');
  }
  const meshApi = r.string('mesh_api', { required: true });
  let meshApiOk = meshApi !== undefined;
  if (meshApi !== undefined) {
    const verdict = checkRange(meshApi, ctx.meshApiVersion);
    if (verdict === 'invalid') {
      meshApiOk = false;
      ctx.sink.add('mesh_api_invalid', r.at('mesh_api'), 'must be a semver range such as ^1.0');
    } else if (verdict === 'unsatisfied') {
      meshApiOk = false;
      ctx.sink.add(
        'mesh_api_unsatisfied',
        r.at('mesh_api'),
        `the package targets Mesh API ${meshApi}; this Mesh implements ${ctx.meshApiVersion}`,
      );
    }
  }
  const hookProtocol = r.integer('hook_protocol', { required: true });
  let hookOk = hookProtocol !== undefined;
  if (hookProtocol !== undefined && !HOOK_PROTOCOL_VERSIONS.has(hookProtocol)) {
    hookOk = false;
    ctx.sink.add(
      'hook_protocol_unsupported',
      r.at('hook_protocol'),
      `this Mesh speaks hook protocol ${[...HOOK_PROTOCOL_VERSIONS].join(', ')}`,
    );
  }
  const description = r.string('description', { required: true });
  const descriptionOk = checkDescription(r, description, ctx);
  const inFlight = r.string('in_flight', { required: false });
  const inFlightOk =
    inFlight === undefined || (IN_FLIGHT_POLICIES as readonly string[]).includes(inFlight);
  if (!inFlightOk)
    ctx.sink.add(
      'in_flight_unknown',
      r.at('in_flight'),
      `must be one of ${IN_FLIGHT_POLICIES.join(', ')}`,
    );
  r.finish();
  if (
    !idOk ||
    !versionOk ||
    !meshApiOk ||
    !hookOk ||
    !inFlightOk ||
    description === undefined ||
    !descriptionOk
  )
    return undefined;
  return {
    id: id as string,
    version: version as string,
    meshApi: meshApi as string,
    hookProtocol: hookProtocol as number,
    description,
    inFlight: (inFlight ?? 'drain') as InFlightPolicy,
  };
}

function readHooks(root: TableReader, ctx: ValidationContext): HookDeclarations | undefined {
  const r = root.table('hooks', { required: false });
  if (!r) return root.raw('hooks') === undefined ? {} : undefined;
  const hooks: Partial<Record<HookName, string>> = {};
  const bound = new Map<string, HookName>();
  let ok = true;
  for (const hook of HOOK_NAMES) {
    const name = r.string(hook, { required: false });
    if (name === undefined) {
      if (r.values[hook] !== undefined) ok = false;
      continue;
    }
    if (!checkBindingName(name, r.at(hook), ctx)) {
      ok = false;
      continue;
    }
    const first = bound.get(name);
    if (first !== undefined) {
      ok = false;
      ctx.sink.add(
        'handler_duplicate',
        r.at(hook),
        `names the same function as hooks.${first}; bindings are 1:1`,
        { handler: name },
      );
      continue;
    }
    bound.set(name, hook);
    hooks[hook] = name;
  }
  const before = ctx.sink.size;
  r.finish(`is not a hook; the hooks are ${HOOK_NAMES.join(', ')}`);
  return ok && ctx.sink.size === before ? hooks : undefined;
}

/**
 * Need mapping resolves exactly once: every `secret:<kind>` need names a kind provided by exactly
 * one secret config field of the same package. Dangling needs and doubly-provided kinds are
 * refused.
 */
function checkNeedMapping(
  secrets: readonly SecretProvider[],
  tools: readonly { declaration: ToolDeclaration; path: string }[],
  ctx: ValidationContext,
): void {
  const providers = new Map<string, string[]>();
  for (const { kind, path } of secrets) {
    const list = providers.get(kind) ?? [];
    if (list.length > 0) {
      ctx.sink.add(
        'secret_kind_duplicate',
        `${path}.kind`,
        `kind is already provided by ${list[0]}; each kind has exactly one provider`,
      );
    }
    list.push(path);
    providers.set(kind, list);
  }
  for (const { declaration, path } of tools) {
    declaration.needs.forEach((need: Need, j) => {
      if (!need.startsWith('secret:')) return;
      const kind = need.slice('secret:'.length);
      const list = providers.get(kind) ?? [];
      const field = `${path}.needs[${j}]`;
      const scope = { tool: declaration.name, handler: declaration.handler };
      if (list.length === 0) {
        ctx.sink.add(
          'need_dangling',
          field,
          `no secret config field of this package provides kind ${kind}`,
          scope,
        );
      } else if (list.length > 1) {
        ctx.sink.add(
          'need_ambiguous',
          field,
          `kind ${kind} is provided by ${list.join(' and ')}; it must be exactly one`,
          scope,
        );
      }
    });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Validates a parsed manifest.toml against schema v1, collecting every diagnostic into the
 * context's sink. Returns the deeply frozen manifest only when there were none.
 */
export function validateManifest(
  root: TomlTable,
  ctx: ValidationContext,
): PackageManifest | undefined {
  const start = ctx.sink.size;
  if (!checkManifestVersion(root, ctx)) return undefined;
  const reader = new TableReader(root, '', ctx.sink);
  reader.raw('manifest_version');
  const identity = readPackageSection(reader, ctx);
  const packageId = identity?.id ?? ctx.sink.packageName;
  const { fields: config, providers } = readConfig(reader.tables('config'), ctx);
  const tools: { declaration: ToolDeclaration; path: string }[] = [];
  const names = new Map<string, string>();
  const handlers = new Map<string, string>();
  const toolReaders = reader.tables('tools');
  const rawTools = root['tools'];
  if (rawTools === undefined || (Array.isArray(rawTools) && rawTools.length === 0)) {
    ctx.sink.add('tools_missing', 'tools', 'a package declares at least one [[tools]] entry');
  }
  for (const r of toolReaders) {
    const rawName = r.values['name'];
    const rawHandler = r.values['handler'];
    const scope = {
      ...(typeof rawName === 'string' ? { tool: rawName } : {}),
      ...(typeof rawHandler === 'string' ? { handler: rawHandler } : {}),
    };
    ctx.sink.within(scope, () => {
      const declaration = readTool(r, packageId, ctx);
      if (typeof rawName === 'string') {
        const first = names.get(rawName);
        if (first !== undefined) {
          ctx.sink.add('tool_name_duplicate', r.at('name'), `repeats the name of ${first}`);
          return;
        }
        names.set(rawName, r.path);
      }
      if (typeof rawHandler === 'string') {
        const first = handlers.get(rawHandler);
        if (first !== undefined) {
          ctx.sink.add(
            'handler_duplicate',
            r.at('handler'),
            `is already the handler of ${first}; bindings are 1:1`,
          );
          return;
        }
        handlers.set(rawHandler, r.path);
      }
      if (declaration) tools.push({ declaration, path: r.path });
    });
  }
  const hooks = readHooks(reader, ctx);
  reader.finish();
  checkNeedMapping(providers, tools, ctx);
  if (ctx.sink.size > start || !identity || !hooks) return undefined;
  return deepFreeze({
    manifestVersion: MANIFEST_VERSION,
    package: identity,
    config,
    tools: tools.map((t) => t.declaration),
    hooks,
  });
}
