export { compileShape } from './argument-shape.ts';
export type { ArgumentShape, JsonKind } from './argument-shape.ts';
export {
  declaredServices,
  lazyServices,
  serviceKey,
  services,
  servicesDeclared,
} from './context.ts';
export type { Provenance, ServiceKey, Services, ToolContext, ToolRuntime } from './context.ts';
export { ARGUMENT_LIMITS, decodeArguments, prepareDecoder } from './decode-arguments.ts';
export type { ArgumentDecoder } from './decode-arguments.ts';
export { isNeed, REPLAYS, TOOL_CLASSES } from './definition.ts';
export type {
  Definition,
  Need,
  Origin,
  Replay,
  ToolAttachment,
  ToolClass,
  ToolHandler,
  ToolOutput,
} from './definition.ts';
export { ERROR_CODES, familyOf, isKnownCode, isRetryableCode, RETRYABLE } from './error-codes.ts';
export type { ErrorCode, ErrorFamily } from './error-codes.ts';
export { toolEffect } from './effect.ts';
export type { ToolEffect } from './effect.ts';
export {
  hasCode,
  InvalidToolInputError,
  isMeshError,
  MeshError,
  serializeError,
  ToolUnavailableError,
} from './errors.ts';
export type { SerializedError } from './errors.ts';
export { execute, FatalToolError, invoke, resolveCall } from './executor.ts';
export type { ExecuteResult, ResolvedCall } from './executor.ts';
export { ARTIFACT_KINDS, ATTACHMENT_KINDS, artifactId, observation } from './observation.ts';
export type {
  ArtifactId,
  ArtifactKind,
  AttachmentKind,
  ArtifactLink,
  Observation,
  ObservationKind,
  Truncation,
} from './observation.ts';
export {
  createRegistry,
  describeOrigin,
  MESH_OWNED_PACKAGES,
  RegistryError,
  TOOL_NAME_PATTERN,
} from './registry.ts';
export type { Registry, RegistryOptions, RegistryProblem } from './registry.ts';
export { compileSchema, InvalidSchemaError, JSON_SCHEMA_2020_12 } from './schema-compiler.ts';
export type { CompiledSchema, SchemaStrictness } from './schema-compiler.ts';
