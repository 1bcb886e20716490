import { describe, expect, it } from 'vitest';
import { toChatCompletionsBody } from './chat-completions-wire.ts';

describe('the Chat Completions projection', () => {
  it('sends a user message with images as text and image_url parts with data: URLs', () => {
    const body = toChatCompletionsBody(
      {
        model: 'm',
        tools: [],
        messages: [
          { role: 'user', content: 'plain' },
          {
            role: 'user',
            content: 'look',
            images: [{ mediaType: 'image/png', base64: 'iVBORw0K' }],
          },
        ],
      },
      'm',
    );
    expect(body.messages).toEqual([
      { role: 'user', content: 'plain' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
        ],
      },
    ]);
  });
});
