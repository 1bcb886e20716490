import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import type { Message, Tool } from '../model/wire.ts';
import { fitContext, IMAGE_TOKEN_ESTIMATE, toolTokens } from './context-budget.ts';

const tool: Tool = {
  name: 'remember',
  description: 'Store a fact.',
  parameters: { type: 'object', properties: { content: { type: 'string' } } },
};
const turn = (i: number): Message[] => [
  { role: 'user', content: `question ${i}: ${'words '.repeat(40)}` },
  { role: 'assistant', content: `answer ${i}: ${'words '.repeat(40)}`, toolCalls: [] },
];
const current: Message = { role: 'user', content: 'the current message must always be sent' };

describe('fitContext', async () => {
  it('sends everything when it fits, and prices each part', async () => {
    const fitted = await fitContext(
      {
        system: 'You are a careful agent.',
        memory: 'What you remember: x',
        history: turn(1),
        current,
        round: [],
        tools: [tool],
      },
      { contextTokens: 10_000, reservedOutputTokens: 1000 },
    );
    expect(fitted.messages.at(-1)).toEqual(current);
    expect(fitted.messages).toHaveLength(4);
    expect(fitted.estimate.droppedTurns).toBe(0);
    expect(fitted.estimate.tools).toBe(await toolTokens([tool]));
    expect(fitted.estimate.system).toBe(countTokens('You are a careful agent.'));
    expect(fitted.estimate.total).toBeLessThanOrEqual(fitted.estimate.budget);
  });

  it('drops the oldest turns first and never the current message', async () => {
    const history = [...turn(1), ...turn(2), ...turn(3), ...turn(4)];
    const fitted = await fitContext(
      {
        system: 'You are a careful agent.',
        memory: '',
        history,
        current,
        round: [],
        tools: [tool],
      },
      { contextTokens: 600, reservedOutputTokens: 200 },
    );
    expect(fitted.estimate.droppedTurns).toBeGreaterThan(0);
    const contents = fitted.messages.map((m) => m.content);
    expect(contents.at(-1)).toBe(current.content);
    const kept = contents.filter((c) => c.startsWith('question'));
    // What is kept is the newest turns, in order.
    expect(kept.at(-1)).toMatch(/^question 4/);
    expect(contents.some((c) => c.startsWith('question 1'))).toBe(false);
    expect(fitted.estimate.total).toBeLessThanOrEqual(fitted.estimate.budget);
  });

  it('gives the system prompt what is left, trimming memory before instructions', async () => {
    const memory = `What you remember:\n${'- a long memory line\n'.repeat(200)}`;
    const fitted = await fitContext(
      {
        system: 'Instructions that matter.',
        memory,
        history: [],
        current,
        round: [],
        tools: [tool],
      },
      { contextTokens: 500, reservedOutputTokens: 100 },
    );
    expect(fitted.estimate.systemTruncated).toBe(true);
    expect(fitted.messages[0]?.content.startsWith('Instructions that matter.')).toBe(true);
    expect(fitted.estimate.memory).toBeLessThan(countTokens(memory));
    expect(fitted.estimate.total).toBeLessThanOrEqual(fitted.estimate.budget);
  });

  it('keeps the current message and the round even when nothing else fits', async () => {
    const round: Message[] = [{ role: 'tool', toolCallId: 'c1', content: 'observation' }];
    const fitted = await fitContext(
      { system: 'x '.repeat(500), memory: '', history: turn(1), current, round, tools: [tool] },
      { contextTokens: 200, reservedOutputTokens: 50 },
    );
    expect(fitted.messages.slice(-2)).toEqual([current, round[0]]);
    expect(fitted.estimate.droppedTurns).toBe(1);
  });
});

describe('image pricing', () => {
  it('prices each image at a fixed estimate, never by the length of its base64', async () => {
    const parts = (images: number, base64: string) => ({
      system: '',
      memory: '',
      history: [],
      current,
      round: [
        {
          role: 'user' as const,
          content: 'images',
          images: Array.from({ length: images }, () => ({ mediaType: 'image/png', base64 })),
        },
      ],
      tools: [],
    });
    const budget = { contextTokens: 100_000, reservedOutputTokens: 0 };
    const none = await fitContext(parts(0, ''), budget);
    const small = await fitContext(parts(2, 'AAAA'), budget);
    const large = await fitContext(parts(2, 'A'.repeat(400_000)), budget);
    expect(small.estimate.round - none.estimate.round).toBe(2 * IMAGE_TOKEN_ESTIMATE);
    expect(large.estimate.round).toBe(small.estimate.round);
  });

  it('reduces older observations of a long round to an excerpt and where each is kept, never the newest, the ledger or the calls', async () => {
    const round: Message[] = [];
    const kept = new Map<Message, string>();
    for (let i = 1; i <= 8; i++) {
      round.push({
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `c${i}`, name: 'workspace_exec', arguments: `{"command":"seq ${i}"}` }],
      });
      const result: Message = {
        role: 'tool',
        toolCallId: `c${i}`,
        content: `output ${i}: ${'12345 67890 '.repeat(300)}`,
      };
      round.push(result);
      kept.set(result, `step ${i * 4}`);
    }
    const ledger: Message = {
      role: 'system',
      content: 'Authoritative ledger of this turn: 8 calls',
    };
    round.push(ledger);
    const parts = {
      system: 'You are a careful agent.',
      memory: '',
      history: [],
      current,
      round,
      tools: [tool],
    };
    const budget = { contextTokens: 8_000, reservedOutputTokens: 1_000 };
    const whole = await fitContext(parts, budget);
    // Without knowing where observations are kept, nothing may be reduced: the round overflows.
    expect(whole.estimate.reducedObservations).toBe(0);
    expect(whole.estimate.total).toBeGreaterThan(whole.estimate.budget);

    const fitted = await fitContext({ ...parts, kept }, budget);
    expect(fitted.estimate.total).toBeLessThanOrEqual(fitted.estimate.budget);
    expect(fitted.estimate.reducedObservations).toBeGreaterThan(0);
    const tools = fitted.messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(8);
    // Oldest first: the reduced ones say so and where the whole is; the last two rounds are whole.
    const reduced = tools.slice(0, fitted.estimate.reducedObservations);
    for (const [i, m] of reduced.entries()) {
      expect(m.content).toMatch(/^\[An older result, reduced to fit the context/);
      expect(m.content).toContain(`kept in this run, step ${(i + 1) * 4}.]`);
      expect(m.content).toContain(`output ${i + 1}: 12345`);
    }
    expect(tools.slice(-2).map((m) => m.content)).toEqual(
      round
        .filter((m) => m.role === 'tool')
        .slice(-2)
        .map((m) => m.content),
    );
    // Every call is still there, and the ledger is whole and last.
    expect(fitted.messages.filter((m) => m.role === 'assistant')).toHaveLength(8);
    expect(fitted.messages.at(-1)).toEqual(ledger);
    // The system prompt kept its room.
    expect(fitted.estimate.systemTruncated).toBe(false);
  });
});
