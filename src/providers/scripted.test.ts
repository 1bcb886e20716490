import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../model/wire.ts';
import { scriptedClient, type Script } from './scripted.ts';

const script: Script = {
  fallback: {
    toolCalls: [
      { name: 'lookup', arguments: {} },
      { name: 'lookup', arguments: {} },
    ],
  },
};
const request: ModelRequest = {
  model: 'scripted',
  messages: [{ role: 'user', content: 'hello' }],
  tools: [{ name: 'lookup', description: 'Looks up.', parameters: { type: 'object' } }],
};
const signal = new AbortController().signal;

async function callIds(client: ReturnType<typeof scriptedClient>): Promise<string[]> {
  const response = await client.complete(request, { signal });
  return response.message.toolCalls.map((c) => c.id);
}

describe('scripted call ids', () => {
  it('count up within a client and never collide across clients made at the same moment', async () => {
    const first = scriptedClient(script);
    const second = scriptedClient(script);
    const ids = [...(await callIds(first)), ...(await callIds(first)), ...(await callIds(second))];
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 4).map((id) => id.split('_')[1])).toEqual(['1', '2', '3', '4']);
    // A resumed run gets a new client whose count starts again: its ids must still be new.
    expect(ids[4]?.startsWith('call_1_')).toBe(true);
    expect(ids[4]).not.toBe(ids[0]);
  });
});
