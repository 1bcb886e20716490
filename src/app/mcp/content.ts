import { randomUUID } from 'node:crypto';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import { nestsDeeperThan, type JsonValue } from '../../model/json.ts';
import type { ToolAttachment, ToolOutput } from '../../tool/definition.ts';
import type { AttachmentKind } from '../../tool/observation.ts';

/**
 * The most one image, sound or embedded blob may decode to; a larger one is not stored (a
 * screenshot or a short clip fits; a video does not belong in a tool result).
 */
export const ARTIFACT_LIMIT_BYTES = 8 * 1024 * 1024;
/** The most the stored artifacts of one result may add up to. */
export const RESULT_ARTIFACTS_LIMIT_BYTES = 16 * 1024 * 1024;
/** The most artifacts one result may store. */
export const RESULT_ARTIFACTS_LIMIT = 16;

const MIB = 1024 * 1024;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Text for the model and the bytes to store, from a result's content blocks. */
export interface ConvertedContent {
  readonly text: string;
  readonly attachments: readonly ToolAttachment[];
}

/** A claimed media type as `type/subtype` (parameters dropped), or octet-stream if malformed. */
export function mediaTypeOf(claimed: unknown): string {
  if (typeof claimed !== 'string') return 'application/octet-stream';
  const bare = (claimed.split(';')[0] ?? '').trim().toLowerCase();
  return MEDIA_TYPE.test(bare) ? bare : 'application/octet-stream';
}

/** The bytes decoded size of base64 text would have, without decoding it. */
function decodedLength(compact: string): number {
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.floor((compact.length * 3) / 4) - padding;
}

/** Whether text is strict base64 (standard alphabet, padding only at the end; whitespace removed). */
function isBase64(compact: string): boolean {
  if (compact.length % 4 === 1 || !BASE64.test(compact)) return false;
  return !compact.includes('=') || compact.length % 4 === 0;
}

function sizeText(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${bytes} bytes`;
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Reads a result's content blocks: text stays text; images, audio and embedded blobs (base64) are
 * decoded into attachments the run stores as artifacts, each named in the text by kind, media
 * type, size and artifact id. A block that cannot be stored (not valid base64, over a limit) is
 * named with the reason instead, and the other blocks are kept. A resource link stays a link.
 */
export function convertContent(
  content: readonly ContentBlock[],
  newId: () => string = randomUUID,
): ConvertedContent {
  const attachments: ToolAttachment[] = [];
  let stored = 0;
  const binary = (
    kind: AttachmentKind,
    label: string,
    claimedType: unknown,
    data: unknown,
    uri?: string,
  ): string => {
    const mediaType = mediaTypeOf(claimedType);
    const what = `${label} ${mediaType}`;
    if (typeof data !== 'string') return `[${what}: not stored, the block has no data]`;
    const compact = data.replace(/\s+/g, '');
    if (!isBase64(compact)) return `[${what}: not stored, its data is not valid base64]`;
    const size = decodedLength(compact);
    if (size > ARTIFACT_LIMIT_BYTES)
      return `[${what}, ${sizeText(size)}: not stored, over the ${ARTIFACT_LIMIT_BYTES / MIB} MiB limit per artifact]`;
    if (attachments.length >= RESULT_ARTIFACTS_LIMIT)
      return `[${what}, ${sizeText(size)}: not stored, over the limit of ${RESULT_ARTIFACTS_LIMIT} artifacts per result]`;
    if (stored + size > RESULT_ARTIFACTS_LIMIT_BYTES)
      return `[${what}, ${sizeText(size)}: not stored, over the ${RESULT_ARTIFACTS_LIMIT_BYTES / MIB} MiB limit per result]`;
    const bytes = Buffer.from(compact, 'base64');
    const id = newId();
    stored += bytes.byteLength;
    attachments.push({
      id,
      kind,
      mediaType,
      content: bytes,
      ...(uri === undefined ? {} : { uri }),
    });
    return `[${what}, ${sizeText(bytes.byteLength)}, artifact ${id}]`;
  };
  const text = content
    .map((block) => {
      switch (block.type) {
        case 'text':
          return block.text;
        case 'image':
        case 'audio':
          return binary(block.type, block.type, block.mimeType, block.data);
        case 'resource_link':
          return `[resource ${block.uri}]`;
        case 'resource': {
          const r = block.resource as { uri?: unknown; text?: unknown; blob?: unknown };
          const uri = typeof r.uri === 'string' ? clip(r.uri) : '';
          if (typeof r.text === 'string') return r.text;
          if (r.blob !== undefined)
            return binary('resource', `resource ${uri}`, block.resource.mimeType, r.blob, uri);
          return `[resource ${uri}]`;
        }
        default:
          return '[content]';
      }
    })
    .join('\n');
  return { text, attachments };
}

/** The deepest structured result kept: deeper is a server's attack or bug, not data to store. */
export const MAX_STRUCTURED_DEPTH = 64;

/** Turns a call's result into what the executor records: `isError` results are observations. */
export function toOutput(
  result: CallToolResult,
  outputSchemaCheck?: (data: unknown) => string | undefined,
): ToolOutput {
  const { text, attachments } = convertContent(result.content ?? []);
  const bytes = attachments.length === 0 ? {} : { attachments };
  let structured = result.structuredContent as JsonValue | undefined;
  let note = '';
  if (structured !== undefined && nestsDeeperThan(structured, MAX_STRUCTURED_DEPTH)) {
    structured = undefined;
    note = `\n[structured content nested deeper than ${MAX_STRUCTURED_DEPTH} levels was not kept]`;
  }
  if (note && !result.isError) return { text: `${text}${note}`, ...bytes };
  if (result.isError)
    return {
      text: text || '(the tool reported an error without a message)',
      isError: true,
      ...bytes,
    };
  if (structured !== undefined && outputSchemaCheck) {
    const problem = outputSchemaCheck(structured);
    if (problem)
      return {
        text: `the server's structured result does not match its output schema (${problem}); text: ${text}`,
        ...bytes,
      };
  }
  return structured === undefined ? { text, ...bytes } : { text, data: structured, ...bytes };
}
