/** The only manifest schema version this reader understands; any other value refuses the package. */
export const MANIFEST_VERSION = 1;

/**
 * The Mesh API version this runtime implements. A package's `mesh_api` is a semver range that
 * this version must satisfy, or the package is refused.
 */
export const MESH_API_VERSION = '1.0.0';

/** Hook (lifecycle RPC) protocol versions this runtime speaks; versioned apart from the file format. */
export const HOOK_PROTOCOL_VERSIONS: ReadonlySet<number> = Object.freeze(new Set([1]));

/** Size caps, checked before anything is parsed. */
export const PACKAGE_LIMITS = Object.freeze({
  /** manifest.toml */
  maxManifestBytes: 1024 * 1024,
  /** A referenced JSON Schema file. */
  maxSchemaBytes: 256 * 1024,
  /** SKILL.md: it is rendered into prompts, so it stays small. */
  maxSkillBytes: 64 * 1024,
  /** handlers.ts / hooks.ts, read only to discover their exports. */
  maxSourceBytes: 1024 * 1024,
  /** Nesting of TOML tables and arrays (inline schemas are the deep part). */
  maxTomlDepth: 64,
});

/** `package.id`: globally unique and stable, e.g. `mesh.memory`. */
export const PACKAGE_ID_PATTERN = /^[a-z][a-z0-9_.-]{1,63}$/;

/** A config key: what operators see and handlers read. */
export const CONFIG_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** A secret kind, as in `secret:<kind>` needs (the same rule `isNeed` applies). */
export const SECRET_KIND_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** A handler or hook binding: the name of a named export. */
export const HANDLER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A package folder under tools/: it becomes part of file paths and generated import names. */
export const PACKAGE_FOLDER_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
