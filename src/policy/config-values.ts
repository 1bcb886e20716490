import {
  configValueFits,
  type ConfigField,
  type ConfigValue,
  type PlainConfigField,
  type ToolPackage,
} from '../manifest/package-manifest.ts';
import type { JsonValue } from '../model/json.ts';
import { MeshError, quoteName } from '../tool/errors.ts';

/** A config value refused at the boundary; the message names the key, never the value. */
export class ConfigValueError extends MeshError {
  static readonly code = 'config_invalid';
  constructor(message: string, key: string) {
    super(ConfigValueError.code, message, { key });
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Stored strings are capped; a config value is a setting, not a document. */
const MAX_STRING = 10_000;

function fits(field: PlainConfigField, value: unknown): value is ConfigValue {
  return (
    configValueFits(field.type, value) && (typeof value !== 'string' || value.length <= MAX_STRING)
  );
}

/**
 * Validates one config value against the manifest that declares it: an unknown package or key, a
 * secret key sent as config, or a wrong type is refused naming the key (never the value).
 */
export function validateConfigValue(
  packages: readonly ToolPackage[],
  packageId: string,
  key: string,
  value: unknown,
): { field: PlainConfigField; value: ConfigValue } {
  const pkg = packages.find((p) => p.manifest.package.id === packageId);
  if (!pkg) throw new ConfigValueError(`no package ${quoteName(packageId)} is installed`, key);
  const field: ConfigField | undefined = pkg.manifest.config.find((f) => f.key === key);
  if (!field) {
    const known = pkg.manifest.config.filter((f) => f.disposition !== 'secret').map((f) => f.key);
    throw new ConfigValueError(
      `${packageId} has no config key ${quoteName(key)}; its keys are: ${known.join(', ') || 'none'}`,
      key,
    );
  }
  if (field.disposition === 'secret') {
    throw new ConfigValueError(`${key} is a secret: capture it as a secret, never as config`, key);
  }
  if (!fits(field, value)) {
    throw new ConfigValueError(
      `${key} must be ${field.type === 'integer' ? 'an integer' : `a ${field.type}`}, not ${kindOf(value)}`,
      key,
    );
  }
  return { field, value };
}

/** An agent's values for one package with the manifest's defaults filled in (config and public). */
export function effectiveConfig(
  pkg: ToolPackage,
  stored: ReadonlyMap<string, JsonValue>,
): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const field of pkg.manifest.config) {
    if (field.disposition === 'secret') continue;
    const value = stored.get(field.key);
    if (value !== undefined && fits(field, value)) out[field.key] = value;
    else if (field.default !== undefined) out[field.key] = field.default;
  }
  return out;
}

/** The public values of every package, as the agent's own tool settings in its prompt. */
export function renderPublicSettings(
  packages: readonly ToolPackage[],
  valuesFor: (packageId: string) => Readonly<Record<string, JsonValue>>,
  offeredPackages: ReadonlySet<string>,
): string {
  const lines: string[] = [];
  for (const pkg of packages) {
    if (!offeredPackages.has(pkg.manifest.package.id)) continue;
    const values = valuesFor(pkg.manifest.package.id);
    for (const field of pkg.manifest.config) {
      if (field.disposition !== 'public') continue;
      const value = values[field.key];
      if (value !== undefined)
        lines.push(
          `- ${pkg.manifest.package.id} ${field.key}: ${JSON.stringify(value)} (${field.description})`,
        );
    }
  }
  return lines.length === 0 ? '' : ['Your tool settings:', ...lines].join('\n');
}
