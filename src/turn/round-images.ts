import type { ImagePart, Message } from '../model/wire.ts';
import type { ArtifactLink } from '../tool/observation.ts';

/** The most images one request carries (the newest are kept); the rest are named, not shown. */
export const MAX_IMAGES_PER_REQUEST = 8;
/** Image types every image-input model of the Chat Completions family accepts. */
const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);
/** The largest image shown to a model (providers refuse larger ones, e.g. OpenAI at 20 MB). */
const MAX_MODEL_IMAGE_BYTES = 5 * 1024 * 1024;

/** An image an observation links, by where it goes in the round. */
export interface RoundImage {
  readonly afterIndex: number;
  readonly link: ArtifactLink;
}

/**
 * The round with the images of each tool round added as a user message after its tool messages
 * (Chat Completions carries images only in user messages). Only the newest
 * {@link MAX_IMAGES_PER_REQUEST} images of types models accept are shown; the message names the
 * others by artifact id.
 */
export async function withImages(
  round: { messages: Message[]; images: RoundImage[] },
  load: (id: string) => Promise<Uint8Array | undefined>,
): Promise<{ messages: Message[]; shown: number }> {
  if (round.images.length === 0) return { messages: round.messages, shown: 0 };
  const showable = round.images.filter(
    (i) => MODEL_IMAGE_TYPES.has(i.link.mediaType) && i.link.sizeBytes <= MAX_MODEL_IMAGE_BYTES,
  );
  const shownIds = new Set(showable.slice(-MAX_IMAGES_PER_REQUEST).map((i) => i.link.artifactId));
  const byPlace = new Map<number, { parts: ImagePart[]; shown: string[]; left: string[] }>();
  let shown = 0;
  for (const image of round.images) {
    const place = byPlace.get(image.afterIndex) ?? { parts: [], shown: [], left: [] };
    byPlace.set(image.afterIndex, place);
    const bytes = shownIds.has(image.link.artifactId)
      ? await load(image.link.artifactId)
      : undefined;
    if (bytes) {
      place.parts.push({
        mediaType: image.link.mediaType,
        base64: Buffer.from(bytes).toString('base64'),
      });
      place.shown.push(image.link.artifactId);
      shown++;
    } else place.left.push(image.link.artifactId);
  }
  const messages: Message[] = [];
  round.messages.forEach((m, i) => {
    messages.push(m);
    const place = byPlace.get(i + 1);
    if (!place) return;
    const text = [
      place.shown.length > 0
        ? `The images the tool calls above returned, in order: artifact ${place.shown.join(', artifact ')}.`
        : '',
      place.left.length > 0
        ? `Not shown (a type or size models do not take, or over ${MAX_IMAGES_PER_REQUEST} images): artifact ${place.left.join(', artifact ')}.`
        : '',
    ]
      .filter((t) => t !== '')
      .join(' ');
    messages.push({
      role: 'user',
      content: text,
      ...(place.parts.length > 0 ? { images: place.parts } : {}),
    });
  });
  return { messages, shown };
}
