import type { ConfigField, ToolPackage } from '../../manifest/package-manifest.ts';
import type { JsonValue } from '../../model/json.ts';
import { AUDIENCES, type Audience } from '../../policy/audience.ts';
import { validateConfigValue } from '../../policy/config-values.ts';
import { toolKey, withholdReason } from '../../policy/offer.ts';
import { agentToolOwnerId } from '../../secrets/secret-input.ts';
import type { AgentRecord } from '../../run/records.ts';
import {
  deleteConfigValue,
  listConfigValues,
  setConfigValue,
  setPackageAudiences,
  setToolEnabled,
} from '../../store/tool-policy.ts';
import type { Definition } from '../../tool/definition.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { lifecycleStore } from '../../store/lifecycle.ts';
import { applyConfig, installAnswer, type InstallAnswer } from './installs.ts';
import { agentConfig, agentOfferFacts } from './policy.ts';
import { secretSlotView, type SecretSlotView } from './secret-slot.ts';

/**
 * Installed packages as manifests declare them, and as each agent has them: tool enablement,
 * config values and audiences. Nothing here knows any particular tool.
 */

/** The installed package with this id, or a typed refusal. */
export function requirePackage(mesh: Mesh, packageId: string): ToolPackage {
  const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === packageId);
  if (!pkg)
    throw new MeshError('package_not_found', `no package ${quoteName(packageId)} is installed`);
  return pkg;
}

/** The built-in tool with this name, or a typed refusal. */
export function requireTool(mesh: Mesh, name: string): Definition {
  const definition = mesh.catalog.registry.get(name);
  if (!definition) throw new MeshError('tool_not_found', `no tool named ${quoteName(name)}`);
  return definition;
}

/** A config field as the manifest declares it (a secret field says which kind it holds). */
export interface ConfigFieldView {
  readonly key: string;
  readonly disposition: ConfigField['disposition'];
  readonly type: ConfigField['type'];
  readonly description: string;
  readonly default?: JsonValue;
  readonly kind?: string;
}

/** A tool as its manifest declares it. */
export interface ToolView {
  readonly name: string;
  readonly description: string;
  readonly class: Definition['class'];
  readonly replay: Definition['replay'];
  readonly needs: readonly string[];
  readonly parameters: Definition['tool']['parameters'];
}

/** A package as its manifest declares it: the whole tools tab is rendered from this. */
export interface PackageView {
  readonly id: string;
  readonly version: string;
  readonly description: string;
  readonly config: readonly ConfigFieldView[];
  readonly tools: readonly ToolView[];
}

function toolView(d: Definition): ToolView {
  return {
    name: d.tool.name,
    description: d.tool.description,
    class: d.class,
    replay: d.replay,
    needs: [...d.needs],
    parameters: d.tool.parameters,
  };
}

/** Projects a package's manifest; nothing here knows any particular tool. */
export function packageView(mesh: Mesh, pkg: ToolPackage): PackageView {
  const id = pkg.manifest.package.id;
  return {
    id,
    version: pkg.manifest.package.version,
    description: pkg.manifest.package.description,
    config: pkg.manifest.config.map((f) => ({
      key: f.key,
      disposition: f.disposition,
      type: f.type,
      description: f.description,
      ...(f.disposition === 'secret' ? { kind: f.kind } : {}),
      ...(f.disposition !== 'secret' && f.default !== undefined ? { default: f.default } : {}),
    })),
    tools: mesh.catalog.registry
      .definitions()
      .filter((d) => d.origin.packageId === id)
      .map(toolView),
  };
}

export function packageViews(mesh: Mesh): PackageView[] {
  return mesh.catalog.packages.map((p) => packageView(mesh, p));
}

/** One package as installed for one agent. */
export interface AgentPackageView extends PackageView {
  /** Config and public values with defaults filled in; secrets never appear here. */
  readonly values: Readonly<Record<string, JsonValue>>;
  /** Keys the agent set explicitly (the rest are defaults). */
  readonly setKeys: readonly string[];
  /** Presence of each secret field, by key. */
  readonly secrets: Readonly<Record<string, SecretSlotView>>;
  /** Audiences the package is limited to; undefined means every audience. */
  readonly audiences: readonly Audience[] | undefined;
  /** The agent's install of the package: its state, history and open compensation tasks. */
  readonly install: InstallAnswer;
  readonly tools: readonly (ToolView & {
    readonly enabled: boolean;
    /** Per audience: null when offered, otherwise why not. */
    readonly offer: Readonly<Record<Audience, string | null>>;
  })[];
}

/** Every package as installed for an agent: enablement, values, secret presence, offers. */
export async function agentPackages(mesh: Mesh, agent: AgentRecord): Promise<AgentPackageView[]> {
  const [facts, configFor, rows, installRows] = await Promise.all([
    agentOfferFacts(mesh, agent.id),
    agentConfig(mesh, agent.id),
    listConfigValues(mesh.db, agent.id),
    lifecycleStore(mesh.db).listInstalls(agent.id),
  ]);
  const installs = new Map(installRows.map((i) => [i.packageId, i]));
  const views: AgentPackageView[] = [];
  for (const pkg of mesh.catalog.packages) {
    const base = packageView(mesh, pkg);
    const held = await mesh.secrets.describe({
      ownerType: 'agent_tool',
      ownerId: agentToolOwnerId(agent.id, base.id),
    });
    const secrets: Record<string, SecretSlotView> = {};
    for (const field of pkg.manifest.config) {
      if (field.disposition !== 'secret') continue;
      secrets[field.key] = secretSlotView(held.find((m) => m.kind === field.kind));
    }
    views.push({
      ...base,
      install: await installAnswer(mesh, agent.id, pkg, installs.get(base.id)),
      values: configFor(base.id),
      setKeys: rows.filter((r) => r.packageId === base.id).map((r) => r.key),
      secrets,
      audiences: facts.packageAudiences.get(base.id),
      tools: base.tools.map((tool) => {
        const definition = requireTool(mesh, tool.name);
        const offer = Object.fromEntries(
          AUDIENCES.map((audience) => [
            audience,
            withholdReason(definition, { ...facts, audience }) ?? null,
          ]),
        ) as Record<Audience, string | null>;
        const enabled = !facts.disabledTools.has(toolKey(base.id, tool.name));
        return { ...tool, enabled, offer };
      }),
    });
  }
  return views;
}

/** Opts an agent out of a built-in tool, or back in. */
export async function setAgentToolEnabled(
  mesh: Mesh,
  agent: AgentRecord,
  toolName: string,
  enabled: boolean,
): Promise<void> {
  const { origin } = requireTool(mesh, toolName);
  await setToolEnabled(mesh.db, agent.id, { packageId: origin.packageId, toolName }, enabled);
}

/** Sets one config or public value, validated against the manifest that declares the key. */
export async function setAgentConfig(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  key: string,
  value: unknown,
  actor = 'mesh',
): Promise<void> {
  const pkg = requirePackage(mesh, packageId);
  const checked = validateConfigValue(mesh.catalog.packages, packageId, key, value);
  await setConfigValue(mesh.db, agent.id, packageId, key, checked.value);
  await applyConfig(mesh, agent.id, pkg, actor);
}

/** Returns a key to its manifest default. */
export async function resetAgentConfig(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  key: string,
  actor = 'mesh',
): Promise<void> {
  const pkg = requirePackage(mesh, packageId);
  const field = pkg.manifest.config.find((f) => f.key === key);
  if (!field || field.disposition === 'secret')
    throw new MeshError('config_invalid', `${packageId} has no config key ${quoteName(key)}`, {
      key,
    });
  await deleteConfigValue(mesh.db, agent.id, packageId, key);
  await applyConfig(mesh, agent.id, pkg, actor);
}

/**
 * Turns an operator's text into a config field's type (a form or a command line sends text).
 * Anything that does not read as the type is passed on as text, to be refused by validation.
 */
export function configValueFromText(
  mesh: Mesh,
  packageId: string,
  key: string,
  raw: string,
): unknown {
  const pkg = mesh.catalog.packages.find((p) => p.manifest.package.id === packageId);
  const type = pkg?.manifest.config.find((f) => f.key === key)?.type;
  if (type === 'integer' || type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

/** Limits a package to some audiences for an agent; undefined lifts the limit. */
export async function setAgentAudiences(
  mesh: Mesh,
  agent: AgentRecord,
  packageId: string,
  audiences: readonly string[] | undefined,
): Promise<void> {
  requirePackage(mesh, packageId);
  if (audiences !== undefined) {
    const unknown = audiences.filter((a) => !AUDIENCES.includes(a as Audience));
    if (unknown.length > 0)
      throw new MeshError(
        'invalid_audience',
        `audiences are ${AUDIENCES.join(' and ')}; ${unknown.length} given value(s) are neither`,
      );
  }
  await setPackageAudiences(
    mesh.db,
    agent.id,
    packageId,
    audiences === undefined ? undefined : [...new Set(audiences as Audience[])],
  );
}
