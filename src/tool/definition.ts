import type { JsonObject, JsonSchema, JsonValue } from '../model/json.ts';
import type { Tool } from '../model/wire.ts';
import type { ToolContext } from './context.ts';
import type { AttachmentKind } from './observation.ts';
import type { DeclaredEffect } from './outbound.ts';

/** What a call can touch; declared, never inferred from behaviour. */
export type ToolClass = 'query' | 'workspace' | 'browser' | 'effect';
export const TOOL_CLASSES: readonly ToolClass[] = Object.freeze([
  'query',
  'workspace',
  'browser',
  'effect',
]);

/**
 * What may happen on resume. `replayable` is a promise about the world (safe to run again);
 * `effectful` is not; `internal` is a Mesh-owned write to Mesh's own database, idempotent per call.
 */
export type Replay = 'replayable' | 'effectful' | 'internal';
export const REPLAYS: readonly Replay[] = Object.freeze(['replayable', 'effectful', 'internal']);

/** A requirement that must be provisioned or captured before the tool may be offered. */
export type Need = 'workspace' | 'browser' | `secret:${string}` | `service:${string}`;

/** Where a definition came from. Grants and audit records pin to (packageId, version, digest). */
export interface Origin {
  /** `first_party` packages ship inside Mesh; `remote` ones come from a registered MCP server. */
  readonly source: 'first_party' | 'remote';
  readonly packageId: string;
  readonly version: string;
  /** sha256, hex: of the package content (first party) or of the remote definition (remote). */
  readonly digest: string;
}

/**
 * Bytes a handler returns beside its text, stored by the run as an artifact of the observation's
 * step (in the same transaction). The handler names the id so that its text can name it too.
 */
export interface ToolAttachment {
  /** A lowercase UUID, unique within the output: the artifact's id. */
  readonly id: string;
  readonly kind: AttachmentKind;
  /** The media type the bytes claim (`type/subtype`, no parameters). */
  readonly mediaType: string;
  readonly content: Uint8Array;
  /** The resource's URI, for an embedded resource. */
  readonly uri?: string;
}

/** What a handler returns: text for the model and, optionally, structured data and bytes. */
export interface ToolOutput {
  readonly text: string;
  readonly data?: JsonValue;
  /** The tool ran and reports that it failed: the observation is a `tool_error`. */
  readonly isError?: boolean;
  /**
   * The tool cannot tell whether its effect happened (an attempt whose answer was lost, from a
   * provider that cannot be asked): the observation is an `unknown_outcome`.
   */
  readonly unknownOutcome?: boolean;
  /** Images, audio and embedded blobs, each stored as an artifact the observation links. */
  readonly attachments?: readonly ToolAttachment[];
  /** What the call consumed of the run's meters beyond the call itself (a workspace's compute). */
  readonly usage?: ToolUsage;
}

/** Meters a handler reports, counted into the run's usage with the call. */
export interface ToolUsage {
  /** Compute a backend metered for the call, in milliseconds. */
  readonly computeMs?: number;
  /** Requests the call made to query providers, retries included, by provider name. */
  readonly providerCalls?: Readonly<Record<string, number>>;
  /** Browser session time the call metered, in milliseconds (provision to release, in parts). */
  readonly sessionMs?: number;
  /**
   * A meter the call found spent (a provider's per-run ceiling, the run's session time): the
   * call's observation is recorded, then the run ends as budget-exhausted with this reason.
   */
  readonly exhausted?: string;
  /** Which meter `exhausted` is: a provider's ceiling unless said. */
  readonly exhaustedMeter?: 'providerCalls' | 'maxSessionMinutes';
}

/** A handler: the executable half of a definition. */
export type ToolHandler = (ctx: ToolContext, args: JsonObject) => Promise<ToolOutput>;

/** Exactly one provider-visible callable, bound to Mesh's policy and behaviour. */
export interface Definition {
  readonly tool: Tool;
  readonly class: ToolClass;
  readonly replay: Replay;
  readonly needs: readonly Need[];
  readonly outputSchema?: JsonSchema;
  readonly origin: Origin;
  readonly execute: ToolHandler;
  /**
   * A call of this tool parks the run instead of running: the run waits in `awaiting_input`,
   * holding no lease, until a person answers in its conversation, and the answer is the call's
   * observation (request_input). `execute` is then never invoked by a run.
   */
  readonly parks?: boolean;
  /**
   * Asked per call, before the call is planned, for a definition whose source may have changed
   * since it was offered (a remote tool whose server listed it anew, or said its list changed):
   * what to call instead and why, or undefined when it stands. The replacement is planned and run
   * in its place (a changed remote tool with effect semantics: stamped before it runs), and its
   * observation begins with the reason.
   */
  readonly recheck?: (agentId: string) => Rechecked | undefined;
  /**
   * For a tool that settles through the outbound machinery with one effect known from its
   * arguments (a remote MCP call): that effect. The round's stamp commit records it begun, so the
   * call's send waits on no commit of its own (decision 0058).
   */
  readonly declaredEffect?: (args: JsonObject) => DeclaredEffect;
}

/** What a call of a changed definition runs instead, and why (see {@link Definition.recheck}). */
export interface Rechecked {
  readonly definition: Definition;
  readonly why: string;
}

/** Whether a string is a well-formed need. */
export function isNeed(value: string): value is Need {
  return (
    value === 'workspace' ||
    value === 'browser' ||
    /^secret:[a-z][a-z0-9_]{0,63}$/.test(value) ||
    /^service:[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(value)
  );
}
