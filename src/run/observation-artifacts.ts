import { createHash, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ToolAttachment } from '../tool/definition.ts';
import { excerpt } from '../tool/excerpt.ts';
import {
  artifactId,
  observation as makeObservation,
  type ArtifactLink,
  type Observation,
} from '../tool/observation.ts';
import type { Redactor } from '../tool/redaction.ts';
import type { NewArtifact } from './records.ts';

/** The artifacts an observation is stored with: the bytes a call attached, and a large output. */

/**
 * The artifacts of a call's attachments, each matching one of the observation's links. A
 * textual blob has held secrets removed like any text, and its link then gives the stored size.
 */
export function attachmentArtifacts(
  result: Observation,
  attachments: readonly ToolAttachment[],
  redactor: Redactor,
): { artifacts: NewArtifact[]; observation: Observation } {
  if (attachments.length === 0) return { artifacts: [], observation: result };
  const byId = new Map(attachments.map((a) => [a.id, a]));
  const artifacts: NewArtifact[] = [];
  const links = (result.artifacts ?? []).flatMap((link) => {
    const a = byId.get(link.artifactId);
    if (!a) return [];
    const content = redactedContent(a.content, a.mediaType, redactor);
    artifacts.push({
      id: a.id,
      mediaType: a.mediaType,
      content,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    // What the link says came from outside too: a resource URI may carry a token.
    return [
      {
        ...link,
        mediaType: redactor.text(link.mediaType),
        ...(link.uri === undefined ? {} : { uri: redactor.text(link.uri) }),
        sizeBytes: content.byteLength,
      },
    ];
  });
  return {
    artifacts,
    observation: makeObservation({
      kind: result.kind,
      text: result.text,
      ...(result.data === undefined ? {} : { data: result.data }),
      ...(result.truncated ? { truncated: result.truncated } : {}),
      ...(links.length === 0 ? {} : { artifacts: links }),
    }),
  };
}

/**
 * How far a gzip artifact is inflated to be scanned: past this, its content is not kept (its
 * bytes cannot be shown to hold no secret without reading them, and a bomb would cost the
 * process its memory).
 */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024;

/** What stands in for a gzip artifact too large to scan, gzipped like the original. */
const UNSCANNED =
  'This artifact was not kept: it inflates past 32 MiB, more than Mesh scans for secrets.\n';

/**
 * An artifact's bytes with every held secret removed: a textual one as text; a gzip stream
 * (whatever its media type says) inflated, up to {@link MAX_INFLATED_BYTES}, scanned and
 * deflated again when something was removed; anything else byte for byte, its length kept.
 */
function redactedContent(content: Uint8Array, mediaType: string, redactor: Redactor): Uint8Array {
  if (isTextual(mediaType)) {
    const text = Buffer.from(content).toString('utf8');
    const cleaned = redactor.text(text);
    return cleaned === text ? content : Buffer.from(cleaned, 'utf8');
  }
  if (content[0] === 0x1f && content[1] === 0x8b) {
    let inflated: Buffer | undefined;
    try {
      inflated = gunzipSync(content, { maxOutputLength: MAX_INFLATED_BYTES });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return gzipSync(UNSCANNED);
      // Not a whole gzip stream after all: its bytes are scanned as they are.
    }
    if (inflated) {
      const cleaned = redactor.bytes(inflated);
      return cleaned === inflated ? content : gzipSync(cleaned);
    }
  }
  // Any other media type (an image, a PDF, application/*): byte for byte, length kept.
  return redactor.bytes(content);
}

/** The artifact and the excerpted observation of a result over the limit, else undefined. */
export function largeObservation(
  result: Observation,
  limitBytes: number,
): { artifact: NewArtifact; observation: Observation } | undefined {
  const bytes = Buffer.from(wholeText(result), 'utf8');
  if (bytes.length <= limitBytes) return undefined;
  const id = randomUUID();
  const cut = excerpt(result.text, limitBytes, id);
  const mediaType = result.data === undefined ? 'text/plain; charset=utf-8' : 'application/json';
  // The whole output is linked beside what the call attached, so every artifact of the
  // observation is in its one list.
  const whole: ArtifactLink = {
    artifactId: artifactId(id),
    kind: 'output',
    mediaType,
    sizeBytes: bytes.length,
  };
  return {
    artifact: {
      id,
      mediaType,
      content: bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    },
    observation: makeObservation({
      kind: result.kind,
      text: cut.text,
      truncated: {
        artifactId: artifactId(id),
        totalBytes: bytes.length,
        shownBytes: cut.shownBytes,
      },
      artifacts: [...(result.artifacts ?? []), whole],
    }),
  };
}

/** What an artifact holds for an observation: its text, or text and data as JSON. */
function wholeText(o: Observation): string {
  return o.data === undefined ? o.text : JSON.stringify({ text: o.text, data: o.data });
}

/** Media types whose bytes are text, so held secrets can be removed from them. */
function isTextual(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    mediaType === 'application/json' ||
    mediaType.endsWith('+json') ||
    mediaType === 'application/xml' ||
    mediaType.endsWith('+xml')
  );
}
