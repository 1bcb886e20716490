import { createHash } from 'node:crypto';
import type { JsonValue } from '../model/json.ts';
import type { Message, Tool } from '../model/wire.ts';
import type { PromptInput } from '../run/prompt-snapshot.ts';

/**
 * A request's input for its prompt snapshot: the messages as sent (an image by its digest and
 * size: its bytes are the run's artifact already), the tools offered, the model.
 */
export function promptInput(
  messages: readonly Message[],
  tools: readonly Tool[],
  model: string,
): PromptInput {
  return {
    messages: messages.map((m): JsonValue => {
      if (m.role !== 'user' || !m.images?.length) return m as unknown as JsonValue;
      const images = m.images.map((i) => {
        const bytes = Buffer.from(i.base64, 'base64');
        return {
          mediaType: i.mediaType,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          bytes: bytes.byteLength,
        };
      });
      return { ...m, images };
    }),
    tools: tools as unknown as JsonValue[],
    params: { model },
  };
}
