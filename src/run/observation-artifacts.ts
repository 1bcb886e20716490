import { createHash, randomUUID } from 'node:crypto';
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
    let content = a.content;
    if (isTextual(a.mediaType)) {
      const text = Buffer.from(content).toString('utf8');
      const cleaned = redactor.text(text);
      if (cleaned !== text) content = Buffer.from(cleaned, 'utf8');
    } else {
      // Any other media type (an image, a PDF, application/*): byte for byte, length kept.
      content = redactor.bytes(content);
    }
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
