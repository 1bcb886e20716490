export { matchBindings } from './bindings.ts';
export type { BoundNames } from './bindings.ts';
export { buildCatalog } from './build-catalog.ts';
export type { BuildCatalogOptions, BuildCatalogOutcome } from './build-catalog.ts';
export type { Catalog, CatalogPackage, HandlerBinding, HookBinding } from './catalog.ts';
export { CATALOG_HEADER, renderCatalogModule } from './catalog-writer.ts';
export type { CatalogWriterPackage, CatalogWriterPaths } from './catalog-writer.ts';
export { crawlPackages } from './crawl.ts';
export type { CrawledPackage, CrawlOptions, CrawlResult, DiscoveredExports } from './crawl.ts';
export {
  diagnostic,
  DIAGNOSTIC_CODES,
  formatDiagnostic,
  ManifestInvalidError,
  sortDiagnostics,
} from './diagnostic.ts';
export type { Diagnostic, DiagnosticCode } from './diagnostic.ts';
export { fileHashes, packageDigest, sha256Hex } from './digest.ts';
export type { FileHashes } from './digest.ts';
export { diskFiles, readPackageFile } from './disk-files.ts';
export { exportsOf, loadExportDiscovery } from './export-discovery.ts';
export type { ExportDiscovery, ModuleExports } from './export-discovery.ts';
export type { HookContext, HookOutcome, PackageHook } from '../tool/hook.ts';
export { embeddedFiles, relativePathProblem } from './package-files.ts';
export type { FileRead, PackageFiles } from './package-files.ts';
export { CONFIG_TYPES, DISPOSITIONS, dispositionRules, HOOK_NAMES } from './package-manifest.ts';
export type {
  ConfigField,
  ConfigType,
  ConfigValue,
  Disposition,
  DispositionRules,
  HookDeclarations,
  HookName,
  PackageIdentity,
  PackageManifest,
  PlainConfigField,
  SchemaOrigin,
  SecretConfigField,
  Skill,
  ToolDeclaration,
  ToolPackage,
} from './package-manifest.ts';
export { checkPackageSet } from './package-set.ts';
export { readPackage } from './read-package.ts';
export type { PackageInput, PackageResult, ReadOptions } from './read-package.ts';
export { filterSkillBody, renderSkills, SKILL_TAG } from './render-skills.ts';
export { SchemaPool } from './schema-pool.ts';
export { parseSkill, SKILL_NAME_PATTERN } from './skill.ts';
export { CATALOG_FILE, loadCatalog, verifyCatalog } from './verify-catalog.ts';
export type { CatalogVerification, LoadedCatalog, PackageHooks } from './verify-catalog.ts';
export {
  CONFIG_KEY_PATTERN,
  HANDLER_NAME_PATTERN,
  HOOK_PROTOCOL_VERSIONS,
  MANIFEST_VERSION,
  MESH_API_VERSION,
  PACKAGE_FOLDER_PATTERN,
  PACKAGE_ID_PATTERN,
  PACKAGE_LIMITS,
  SECRET_KIND_PATTERN,
} from './versioning.ts';
