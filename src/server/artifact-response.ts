import type { ArtifactRecord } from '../app/records.ts';

/**
 * Media types a browser may render from an artifact: raster images, sound and plain text. Nothing
 * that can run script (SVG, HTML, PDF, XML) is on the list; everything else is a download.
 */
const RENDERABLE: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'audio/mpeg',
  'audio/wav',
  'audio/x-wav',
  'audio/wave',
  'audio/ogg',
  'audio/webm',
  'audio/mp4',
  'audio/aac',
  'audio/flac',
  'text/plain',
  'application/json',
]);

/** The bare `type/subtype` of a stored media type. */
function bareType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/** Whether a browser may show an artifact of this media type inline (see {@link RENDERABLE}). */
export function isRenderable(mediaType: string): boolean {
  return RENDERABLE.has(bareType(mediaType));
}

/**
 * An artifact's bytes as an HTTP answer. A renderable type is served as itself (text with
 * charset utf-8); any other type is served as `application/octet-stream` for download, so an
 * SVG or HTML a tool returned never runs in Mesh's origin. Every answer is nosniff and carries
 * a sandboxing policy in case a browser opens it anyway.
 */
export function artifactResponse(artifact: ArtifactRecord): Response {
  const bare = bareType(artifact.mediaType);
  const inline = RENDERABLE.has(bare);
  const type = !inline
    ? 'application/octet-stream'
    : bare.startsWith('text/') || bare === 'application/json'
      ? `${bare}; charset=utf-8`
      : bare;
  const bytes = Buffer.from(artifact.content);
  return new Response(bytes, {
    status: 200,
    headers: {
      'content-type': type,
      'content-length': String(bytes.byteLength),
      'content-disposition': inline ? 'inline' : `attachment; filename="artifact-${artifact.id}"`,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cross-origin-resource-policy': 'same-origin',
    },
  });
}
