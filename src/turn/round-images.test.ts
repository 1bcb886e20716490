import { describe, expect, it } from 'vitest';
import type { Message } from '../model/wire.ts';
import { artifactId } from '../tool/observation.ts';
import { MAX_IMAGES_PER_REQUEST, withImages, type RoundImage } from './round-images.ts';

const image = (n: number, mediaType = 'image/png', afterIndex = 2): RoundImage => ({
  afterIndex,
  link: { artifactId: artifactId(`a${n}`), kind: 'image', mediaType, sizeBytes: 1 },
});

describe('images in a round', () => {
  const messages: Message[] = [
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c1', content: 'ok' },
  ];

  it('shows the newest images of types models take after their tool messages, naming the rest', async () => {
    const images = [
      image(0, 'image/svg+xml'),
      ...Array.from({ length: MAX_IMAGES_PER_REQUEST + 1 }, (_, i) => image(i + 1)),
    ];
    const out = await withImages({ messages, images }, async () => new Uint8Array([7]));
    expect(out.shown).toBe(MAX_IMAGES_PER_REQUEST);
    expect(out.messages.slice(0, 2)).toEqual(messages);
    const user = out.messages[2];
    expect(user?.role).toBe('user');
    if (user?.role !== 'user') return;
    expect(user.images).toHaveLength(MAX_IMAGES_PER_REQUEST);
    expect(user.images?.[0]).toEqual({ mediaType: 'image/png', base64: 'Bw==' });
    expect(user.content).toMatch(/in order: artifact a2, artifact a3/);
    expect(user.content).toMatch(/Not shown .*: artifact a0, artifact a1\.$/);
  });

  it('leaves a round without images as it is', async () => {
    const out = await withImages({ messages, images: [] }, async () => undefined);
    expect(out).toEqual({ messages, shown: 0 });
  });
});
