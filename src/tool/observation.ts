import type { JsonValue } from '../model/json.ts';

declare const artifactIdBrand: unique symbol;

/** The id of a stored artifact. Only {@link artifactId} makes one, so it is never an empty string. */
export type ArtifactId = string & { readonly [artifactIdBrand]: true };

/** Validates and brands an artifact id. */
export function artifactId(id: string): ArtifactId {
  if (typeof id !== 'string' || id.trim() === '') {
    throw new TypeError('an artifact id must be a non-empty string');
  }
  return id as ArtifactId;
}

/** What kind of thing an observation reports. */
export type ObservationKind =
  /** The handler ran and returned this. */
  | 'result'
  /**
   * The tool ran and reported that it failed (a remote tool's `isError` result): its message is
   * the text. The model may try differently; the run does not fail.
   */
  | 'tool_error'
  /** The arguments were refused; the text tells the model what to fix. */
  | 'invalid_input'
  /** A query tool's provider could not be reached. */
  | 'unavailable'
  /** The model named a tool it was not offered. */
  | 'unknown_tool'
  /** An effect crossed the commit boundary but the run stopped before its outcome was recorded. */
  | 'unknown_outcome'
  /** The call was recorded with its round and never ran: the run stopped first (a budget ran out). */
  | 'not_run';

/** Marks an observation whose text is an excerpt of a stored artifact. */
export interface Truncation {
  readonly artifactId: ArtifactId;
  readonly totalBytes: number;
  readonly shownBytes: number;
}

/** What a handler may attach to its result: an image, a sound, or an embedded resource. */
export type AttachmentKind = 'image' | 'audio' | 'resource';
export const ATTACHMENT_KINDS: readonly AttachmentKind[] = Object.freeze([
  'image',
  'audio',
  'resource',
]);

/**
 * What kind of bytes a linked artifact holds: an attachment's, or `output`, the whole output of
 * a call whose observation shows an excerpt (the artifact its `truncated` names).
 */
export type ArtifactKind = AttachmentKind | 'output';
export const ARTIFACT_KINDS: readonly ArtifactKind[] = Object.freeze([
  ...ATTACHMENT_KINDS,
  'output',
]);

/** An artifact holding bytes a call returned (an image, a sound, an embedded blob). */
export interface ArtifactLink {
  readonly artifactId: ArtifactId;
  readonly kind: ArtifactKind;
  readonly mediaType: string;
  /** The stored size, in bytes. */
  readonly sizeBytes: number;
  /** The resource's URI, for an embedded resource. */
  readonly uri?: string;
}

/** A typed, persisted result of one tool call: never a bare string blob. */
export interface Observation {
  readonly kind: ObservationKind;
  /** What the model is shown. */
  readonly text: string;
  /** Structured content, validated against the tool's output schema when it declares one. */
  readonly data?: JsonValue;
  /** Present only with the id of the artifact that holds the whole output. */
  readonly truncated?: Truncation;
  /** The artifacts holding the bytes the call returned, in the order the text names them. */
  readonly artifacts?: readonly ArtifactLink[];
}

/**
 * Builds a frozen observation. A truncation without a valid artifact id is refused here as well as
 * by the type, because observations are also rebuilt from stored rows.
 */
export function observation(input: Observation): Observation {
  const { kind, text, data, truncated, artifacts } = input;
  if (truncated !== undefined) {
    if (typeof truncated.artifactId !== 'string' || truncated.artifactId.trim() === '') {
      throw new TypeError(
        'a truncated observation needs the id of the artifact holding the whole output',
      );
    }
    if (
      !Number.isSafeInteger(truncated.totalBytes) ||
      !Number.isSafeInteger(truncated.shownBytes) ||
      truncated.shownBytes < 0 ||
      truncated.shownBytes > truncated.totalBytes
    ) {
      throw new TypeError('a truncation needs 0 <= shownBytes <= totalBytes');
    }
  }
  for (const link of artifacts ?? []) {
    if (typeof link.artifactId !== 'string' || link.artifactId.trim() === '')
      throw new TypeError('an artifact link needs the id of its artifact');
    if (!ARTIFACT_KINDS.includes(link.kind))
      throw new TypeError('an artifact link needs a kind: image, audio or resource');
    if (!Number.isSafeInteger(link.sizeBytes) || link.sizeBytes < 0)
      throw new TypeError('an artifact link needs a size of 0 or more bytes');
  }
  const out: { -readonly [K in keyof Observation]: Observation[K] } = { kind, text };
  if (data !== undefined) out.data = data;
  if (truncated !== undefined) out.truncated = Object.freeze({ ...truncated });
  if (artifacts !== undefined && artifacts.length > 0)
    out.artifacts = Object.freeze(artifacts.map((link) => Object.freeze({ ...link })));
  return Object.freeze(out);
}
