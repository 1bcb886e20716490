import type { JsonSchema } from '../model/json.ts';
import type { Need, Replay, ToolClass } from '../tool/definition.ts';
import type { HookName } from '../tool/hook.ts';

/**
 * Who may see a config value, as one closed vocabulary (not three loose booleans, which admitted
 * contradictory states such as a secret that is visible to the user).
 */
export type Disposition = 'secret' | 'config' | 'public';
/** Every disposition, in the order the docs list them. */
export const DISPOSITIONS: readonly Disposition[] = Object.freeze(['secret', 'config', 'public']);

/** What a disposition means, as enforced by the server. */
export interface DispositionRules {
  /** Stored encrypted at rest (the secrets table) rather than in agent_tool_config. */
  readonly encryptedAtRest: boolean;
  /** Ever returned by an API, log line or prompt once written (write-only when false). */
  readonly returned: boolean;
  /** Handed to the package's handlers as a config value (`ctx.config`). */
  readonly reachesHandlers: boolean;
  /** Rendered into the prompt as the agent's own tool settings. */
  readonly renderedInPrompt: boolean;
}

const SECRET: DispositionRules = Object.freeze({
  encryptedAtRest: true,
  returned: false,
  reachesHandlers: false,
  renderedInPrompt: false,
});
const CONFIG: DispositionRules = Object.freeze({
  encryptedAtRest: false,
  returned: true,
  reachesHandlers: true,
  renderedInPrompt: false,
});
const PUBLIC: DispositionRules = Object.freeze({
  encryptedAtRest: false,
  returned: true,
  reachesHandlers: true,
  renderedInPrompt: true,
});

/**
 * The disposition truth table. A secret is never a config value: it reaches a tool only through
 * the run's minted grant set, via a `secret:<kind>` need.
 */
export function dispositionRules(disposition: Disposition): DispositionRules {
  switch (disposition) {
    case 'secret':
      return SECRET;
    case 'config':
      return CONFIG;
    case 'public':
      return PUBLIC;
    default: {
      const never: never = disposition;
      throw new Error(`unknown disposition ${String(never)}`);
    }
  }
}

/** The value types a config field may have. Secrets are always strings. */
export type ConfigType = 'string' | 'integer' | 'number' | 'boolean';
/** Every config value type. */
export const CONFIG_TYPES: readonly ConfigType[] = Object.freeze([
  'string',
  'integer',
  'number',
  'boolean',
]);

/** A config value's JSON form. */
export type ConfigValue = string | number | boolean;

/** Whether a value is of a config type: the one check for manifest defaults and stored values. */
export function configValueFits(type: ConfigType, value: unknown): value is ConfigValue {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    default: {
      const never: never = type;
      throw new Error(`unknown config type ${String(never)}`);
    }
  }
}

/** A write-only credential the package needs; `kind` is what `secret:<kind>` needs refer to. */
export interface SecretConfigField {
  readonly disposition: 'secret';
  readonly key: string;
  readonly type: 'string';
  readonly kind: string;
  readonly description: string;
}

/** A value handlers read (`config`), and that the prompt also shows (`public`). */
export interface PlainConfigField {
  readonly disposition: 'config' | 'public';
  readonly key: string;
  readonly type: ConfigType;
  readonly default?: ConfigValue;
  readonly description: string;
}

/** One `[[config]]` entry. */
export type ConfigField = SecretConfigField | PlainConfigField;

/** Where a schema came from: inline in the manifest or a file under the package folder. */
export type SchemaOrigin =
  { readonly kind: 'inline' } | { readonly kind: 'file'; readonly path: string };

/** One `[[tools]]` entry: becomes exactly one Definition. */
export interface ToolDeclaration {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly parametersFrom: SchemaOrigin;
  readonly outputSchema?: JsonSchema;
  readonly outputSchemaFrom?: SchemaOrigin;
  readonly class: ToolClass;
  readonly replay: Replay;
  readonly needs: readonly Need[];
  /** The named export of `handlers.ts` that implements the tool. */
  readonly handler: string;
  /** A call parks the run until a person acts (Mesh-owned packages only; see `Definition.parks`). */
  readonly parks?: true;
}

export type { HookName };
/** Every lifecycle juncture, in the order hooks are listed. */
export const HOOK_NAMES: readonly HookName[] = Object.freeze([
  'on_enable',
  'on_disable',
  'on_secret_capture',
  'health_check',
]);

/** `[hooks]`: for each juncture the package participates in, the named export of `hooks.ts`. */
export type HookDeclarations = Readonly<Partial<Record<HookName, string>>>;

/** `[package]`: identity, versioning and the description operators read. */
export interface PackageIdentity {
  readonly id: string;
  readonly version: string;
  /** The semver range of Mesh API versions the package targets. */
  readonly meshApi: string;
  readonly hookProtocol: number;
  readonly description: string;
  /**
   * `in_flight`: what disabling the package does with its calls still running (its tools are
   * withheld from new requests at once): `drain` waits for them to end (default), `cancel` stops
   * the runs holding them (each resumes without the package).
   */
  readonly inFlight: InFlightPolicy;
}

/** What a disable does with the package's calls in flight. */
export type InFlightPolicy = 'drain' | 'cancel';
export const IN_FLIGHT_POLICIES: readonly InFlightPolicy[] = Object.freeze(['drain', 'cancel']);

/** A parsed and validated manifest.toml (schema v1). Deeply frozen. */
export interface PackageManifest {
  readonly manifestVersion: 1;
  readonly package: PackageIdentity;
  readonly config: readonly ConfigField[];
  readonly tools: readonly ToolDeclaration[];
  readonly hooks: HookDeclarations;
}

/** SKILL.md: reference content for the model, rendered as untrusted material. */
export interface Skill {
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

/**
 * A package as the runtime knows it: the manifest plus what the operator surface renders from
 * (config fields, hooks, skill) and what audit records pin to (id, version, digest).
 */
export interface ToolPackage {
  /** The folder under tools/ (not an identity: grants pin to id, version and digest). */
  readonly folder: string;
  /** The manifest path as shown in diagnostics. */
  readonly manifestFile: string;
  readonly manifest: PackageManifest;
  /** The package's content digest over its whole file set (see `packageDigest`). */
  readonly digest: string;
  /** sha256 (hex) of every file the digest covers, by relative path. */
  readonly files: Readonly<Record<string, string>>;
  /** sha256 (hex) of manifest.toml alone. */
  readonly manifestSha256: string;
  /** manifest.toml as read (embedded in the generated catalog). */
  readonly manifestText: string;
  /** The text of each schema file the manifest references, by relative path. */
  readonly schemaFiles: Readonly<Record<string, string>>;
  readonly skill?: Skill;
  /** SKILL.md as read, when the package ships one. */
  readonly skillText?: string;
}
