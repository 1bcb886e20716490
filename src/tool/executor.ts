import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import { CallContext } from './call-context.ts';
import { observedCalls, timedCall } from './call-observer.ts';
import type { ToolRuntime } from './context.ts';
import { decodeArguments, prepareDecoder } from './decode-arguments.ts';
import type { Definition, ToolAttachment, ToolOutput, ToolUsage } from './definition.ts';
import {
  hasCode,
  InvalidToolInputError,
  MeshError,
  serializeError,
  ToolUnavailableError,
  type SerializedError,
} from './errors.ts';
import {
  ATTACHMENT_KINDS,
  artifactId,
  observation,
  type ArtifactLink,
  type Observation,
} from './observation.ts';
import { withCallEffects, type CallEffects } from './outbound.ts';
import type { Registry } from './registry.ts';
import { SPAN_ATTRIBUTES as A, tracingEnabled, withSpan } from './tracing.ts';

/** What one call came to. Only bugs and infrastructure faults are thrown ({@link FatalToolError}). */
export type ExecuteResult =
  | {
      readonly kind: 'observation';
      readonly definition: Definition;
      readonly observation: Observation;
      /** The bytes of the artifacts the observation links, for the run to store with it. */
      readonly attachments?: readonly ToolAttachment[];
      /** What the call consumed of the run's meters (a workspace's compute). */
      readonly usage?: ToolUsage;
    }
  | {
      readonly kind: 'invalid_input';
      readonly definition: Definition;
      readonly observation: Observation;
      readonly error: SerializedError;
    }
  | {
      readonly kind: 'unavailable';
      readonly definition: Definition;
      readonly observation: Observation;
      readonly error: SerializedError;
    }
  | { readonly kind: 'unknown_tool'; readonly observation: Observation };

type ObservationResult = Extract<ExecuteResult, { kind: 'observation' }>;

/**
 * A handler failed in a way the model cannot fix (an unreachable store, a broken contract). It
 * fails the turn; `toJSON()` is what the run records, `{code, message, data}`.
 */
export class FatalToolError extends MeshError {
  static readonly code = 'tool_failed';
  readonly tool: string;
  readonly failure: SerializedError;
  constructor(tool: string, failure: SerializedError) {
    super(FatalToolError.code, `tool ${tool} failed: ${failure.message}`, {
      tool,
      cause:
        failure.data === undefined
          ? { code: failure.code, message: failure.message }
          : { ...failure },
    });
    this.tool = tool;
    this.failure = failure;
  }
}

function printableName(name: string): string {
  const clipped = name.length > 64 ? `${name.slice(0, 61)}...` : name;
  return JSON.stringify(clipped);
}

/** A call whose tool was found and whose arguments decoded, or the observation that refuses it. */
export type ResolvedCall =
  | { readonly kind: 'ready'; readonly definition: Definition; readonly args: JsonObject }
  | Extract<ExecuteResult, { kind: 'invalid_input' } | { kind: 'unknown_tool' }>;

/**
 * Decodes the arguments without running the handler: the first half of {@link execute}. Given the
 * agent, a definition that may have changed since it was offered is checked again now
 * ({@link Definition.recheck}) and its replacement resolved in its place.
 */
export function resolveCall(registry: Registry, call: ToolCall, agentId?: string): ResolvedCall {
  const held = registry.get(call.name);
  const definition = agentId === undefined ? held : (held?.recheck?.(agentId)?.definition ?? held);
  if (!definition) {
    const offered = registry.names();
    return {
      kind: 'unknown_tool',
      observation: observation({
        kind: 'unknown_tool',
        text:
          `There is no tool named ${printableName(call.name)}. ` +
          (offered.length === 0
            ? 'No tools are available in this turn.'
            : `The tools you can call are: ${offered.join(', ')}.`),
      }),
    };
  }
  try {
    return {
      kind: 'ready',
      definition,
      args: decodeArguments(call.arguments, definition.tool.parameters),
    };
  } catch (error) {
    if (hasCode(error, InvalidToolInputError.code)) return invalidInput(definition, error);
    throw new FatalToolError(definition.tool.name, serializeError(error));
  }
}

function invalidInput(
  definition: Definition,
  error: MeshError,
): ExecuteResult & { kind: 'invalid_input' } {
  return {
    kind: 'invalid_input',
    definition,
    error: error.toJSON(),
    observation: observation({
      kind: 'invalid_input',
      text: `${definition.tool.name}: ${error.message}`,
    }),
  };
}

/**
 * The one path every call takes: look up → decode and validate → invoke → typed observation.
 * A name the registry does not hold becomes an observation naming the offered tools. A handler
 * error is fatal unless tagged invalid input (any class) or unavailable (query class only: an
 * effect that says "unavailable" may already have acted).
 */
export function execute(
  registry: Registry,
  call: ToolCall,
  runtime: ToolRuntime,
): Promise<ExecuteResult> {
  // Not an async function: the handler's promise is returned as it is, without another layer.
  let resolved: ResolvedCall;
  try {
    resolved = resolveCall(registry, call, runtime.agentId);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  if (resolved.kind !== 'ready') return Promise.resolve(resolved);
  return invoke(resolved.definition, resolved.args, call, runtime);
}

/**
 * Runs an already-decoded call's handler and types its outcome, in an `execute_tool` span that
 * names the tool, the call and what it came to (never its arguments or result).
 */
export function invoke(
  definition: Definition,
  args: JsonObject,
  call: ToolCall,
  runtime: ToolRuntime,
  step?: number,
  effects?: CallEffects,
): Promise<Exclude<ExecuteResult, { kind: 'unknown_tool' }>> {
  const observer = observedCalls();
  if (observer)
    return timedCall(observer, definition, () =>
      traced(definition, args, call, runtime, step, effects),
    );
  return traced(definition, args, call, runtime, step, effects);
}

function traced(
  definition: Definition,
  args: JsonObject,
  call: ToolCall,
  runtime: ToolRuntime,
  step: number | undefined,
  effects: CallEffects | undefined,
): Promise<Exclude<ExecuteResult, { kind: 'unknown_tool' }>> {
  // Untraced, a call builds no span, attributes or outcome closure (bench:executor).
  if (!tracingEnabled()) return invokeHandler(definition, args, call, runtime, step, effects);
  return withSpan(
    {
      name: `execute_tool ${definition.tool.name}`,
      kind: 'internal',
      operation: 'execute_tool',
      attributes: {
        [A.toolName]: definition.tool.name,
        [A.toolCallId]: call.id,
        // Remote MCP tools are the agent's extensions; first-party ones are Mesh's functions.
        [A.toolType]: definition.origin.source === 'remote' ? 'extension' : 'function',
        [A.toolClass]: definition.class,
        [A.runId]: runtime.runId,
        [A.step]: step,
      },
    },
    () => invokeHandler(definition, args, call, runtime, step, effects),
    (result) => ({ attributes: { [A.toolOutcome]: result.observation.kind } }),
  );
}

async function invokeHandler(
  definition: Definition,
  args: JsonObject,
  call: ToolCall,
  runtime: ToolRuntime,
  step: number | undefined,
  effects: CallEffects | undefined,
): Promise<Exclude<ExecuteResult, { kind: 'unknown_tool' }>> {
  let output: ToolOutput;
  try {
    const ctx = new CallContext(definition, runtime, call, step);
    if (effects) withCallEffects(ctx, effects);
    output = await definition.execute(ctx, args);
  } catch (error) {
    if (hasCode(error, InvalidToolInputError.code)) return invalidInput(definition, error);
    if (hasCode(error, ToolUnavailableError.code) && definition.class === 'query') {
      return {
        kind: 'unavailable',
        definition,
        error: error.toJSON(),
        observation: observation({
          kind: 'unavailable',
          text: `${definition.tool.name} is unavailable: ${error.message}`,
        }),
      };
    }
    throw new FatalToolError(definition.tool.name, serializeError(error));
  }
  if (typeof output !== 'object' || output === null || typeof output.text !== 'string') {
    throw new FatalToolError(definition.tool.name, {
      code: 'invalid_tool_output',
      message: 'the handler returned no text',
    });
  }
  // The output schema describes a result: a failure's data (a delivery that failed or whose
  // outcome is unknown) is what went wrong, reported as it is, not a result that broke its schema.
  if (
    definition.outputSchema !== undefined &&
    output.data !== undefined &&
    output.isError !== true &&
    output.unknownOutcome !== true
  ) {
    const errors = prepareDecoder(definition.outputSchema).compiled.validate(output.data);
    if (errors.length > 0) {
      throw new FatalToolError(definition.tool.name, {
        code: 'invalid_tool_output',
        message: `the handler's data does not match its output schema at ${errors[0]?.instancePath || '/'}`,
      });
    }
  }
  // A handler's null is none, as its undefined is.
  const attachments = (output.attachments as ToolOutput['attachments'] | null) ?? undefined;
  // Most calls return none: no list, iterator or links are made for them (bench:executor).
  const problem = attachments === undefined ? undefined : attachmentProblem(attachments);
  if (problem !== undefined) {
    throw new FatalToolError(definition.tool.name, {
      code: 'invalid_tool_output',
      message: `the handler's attachments are malformed: ${problem}`,
    });
  }
  const kind = output.unknownOutcome ? 'unknown_outcome' : output.isError ? 'tool_error' : 'result';
  // Built field by field rather than with spreads: this is every call's path (bench:executor).
  const shown: { -readonly [K in keyof Observation]: Observation[K] } = { kind, text: output.text };
  if (output.data !== undefined) shown.data = output.data;
  if (attachments !== undefined && attachments.length > 0)
    shown.artifacts = attachments.map((a): ArtifactLink => ({
      artifactId: artifactId(a.id),
      kind: a.kind,
      mediaType: a.mediaType,
      sizeBytes: a.content.byteLength,
      ...(a.uri === undefined ? {} : { uri: a.uri }),
    }));
  const result: { -readonly [K in keyof ObservationResult]: ObservationResult[K] } = {
    kind: 'observation',
    definition,
    observation: observation(shown),
  };
  if (attachments !== undefined && attachments.length > 0) result.attachments = attachments;
  const usage = meteredUsage(output.usage);
  if (usage !== undefined) result.usage = usage;
  return result;
}

/** The meters a handler reported, when they are sound (a bad one is a handler bug). */
function meteredUsage(usage: unknown): ToolUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { computeMs, sessionMs, providerCalls, exhausted, exhaustedMeter } = usage as ToolUsage;
  const sound = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (computeMs !== undefined && !sound(computeMs))
    throw new TypeError('a tool reported compute that is not a non-negative number');
  if (sessionMs !== undefined && !sound(sessionMs))
    throw new TypeError('a tool reported session time that is not a non-negative number');
  if (
    exhaustedMeter !== undefined &&
    exhaustedMeter !== 'providerCalls' &&
    exhaustedMeter !== 'maxSessionMinutes'
  )
    throw new TypeError('a tool reported an exhausted meter it cannot spend');
  if (
    providerCalls !== undefined &&
    (typeof providerCalls !== 'object' ||
      providerCalls === null ||
      !Object.values(providerCalls).every((n) => sound(n) && Number.isSafeInteger(n)))
  )
    throw new TypeError('a tool reported provider calls that are not whole numbers by provider');
  if (exhausted !== undefined && (typeof exhausted !== 'string' || exhausted === ''))
    throw new TypeError('a tool reported an exhausted meter without a reason');
  const metered: ToolUsage = {
    ...(computeMs === undefined ? {} : { computeMs }),
    ...(sessionMs === undefined ? {} : { sessionMs }),
    ...(providerCalls === undefined ? {} : { providerCalls: { ...providerCalls } }),
    ...(exhausted === undefined ? {} : { exhausted }),
    ...(exhaustedMeter === undefined ? {} : { exhaustedMeter }),
  };
  return Object.keys(metered).length === 0 ? undefined : metered;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** Why a handler's attachments cannot be stored (naming the index, never the bytes). */
function attachmentProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'not a list';
  const attachments = value as readonly ToolAttachment[];
  if (attachments.length === 0) return undefined;
  const ids = new Set<string>();
  for (const [i, a] of attachments.entries()) {
    if (typeof a !== 'object' || a === null) return `attachments[${i}] is not an object`;
    if (typeof a.id !== 'string' || !UUID.test(a.id) || ids.has(a.id))
      return `attachments[${i}].id is not a fresh lowercase UUID`;
    ids.add(a.id);
    if (!ATTACHMENT_KINDS.includes(a.kind)) return `attachments[${i}].kind is not a known kind`;
    if (typeof a.mediaType !== 'string' || !MEDIA_TYPE.test(a.mediaType))
      return `attachments[${i}].mediaType is not a type/subtype`;
    if (!(a.content instanceof Uint8Array)) return `attachments[${i}].content is not bytes`;
    if (a.uri !== undefined && typeof a.uri !== 'string')
      return `attachments[${i}].uri is not a string`;
  }
  return undefined;
}
