import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../test/fixtures/mcp-catalog.ts';
import { doublingSchema } from '../../test/support/hostile-schemas.ts';
import type { JsonSchema } from '../model/json.ts';
import { measureSchema, SCHEMA_LIMITS } from './schema-cost.ts';

const refusal = (schema: unknown) => {
  const cost = measureSchema(schema as JsonSchema);
  return 'refused' in cost ? cost.refused : undefined;
};

describe('measuring an untrusted schema before it is compiled', () => {
  it('refuses a $ref expansion that doubles per level, naming the limit', () => {
    expect(refusal(doublingSchema(39))).toMatch(/expands to over 4096 subschemas per value/);
    // Eight levels is 2^8 visits of d0: under the bound, so it is measured, not guessed at.
    const small = measureSchema(doublingSchema(8));
    expect('measure' in small ? small.measure.expansion : 0).toBeGreaterThan(2 ** 8);
  });

  it('reads recursion that steps into the value by one path each time', () => {
    const jsonValue = {
      $defs: {
        value: {
          anyOf: [
            { type: ['string', 'number', 'boolean', 'null'] },
            { type: 'array', items: { $ref: '#/$defs/value' } },
            { type: 'object', additionalProperties: { $ref: '#/$defs/value' } },
          ],
        },
      },
      type: 'object',
      properties: { v: { $ref: '#/$defs/value' } },
    };
    const tree = {
      type: 'object',
      properties: { left: { $ref: '#' }, right: { $ref: '#' }, label: { type: 'string' } },
    };
    expect(refusal(jsonValue)).toBeUndefined();
    expect(refusal(tree)).toBeUndefined();
  });

  it('refuses recursion that reaches the same value twice, even through a shared definition', () => {
    const twice = {
      type: 'object',
      anyOf: [{ properties: { x: { $ref: '#' } } }, { properties: { x: { $ref: '#' } } }],
    };
    const hidden = {
      type: 'object',
      $defs: { t: { properties: { x: { $ref: '#' } } } },
      anyOf: [{ $ref: '#/$defs/t' }, { $ref: '#/$defs/t' }],
    };
    const prefixed = {
      type: 'object',
      properties: { a: { $ref: '#', properties: { b: { $ref: '#' } } } },
    };
    for (const schema of [twice, hidden, prefixed])
      expect(refusal(schema)).toMatch(/more than one path to the same value/);
  });

  it('refuses a cycle that never moves into the value, a ref outside, and dynamic refs', () => {
    expect(
      refusal({
        type: 'object',
        $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } },
        $ref: '#/$defs/a',
      }),
    ).toMatch(/cycle through #\/\$defs\/(a|b) that never moves into the value/);
    expect(refusal({ type: 'object', $ref: 'https://example.com/s.json' })).toMatch(
      /does not point inside the schema/,
    );
    expect(refusal({ type: 'object', $ref: '#/$defs/missing' })).toMatch(/does not point inside/);
    expect(refusal({ type: 'object', $dynamicRef: '#meta' })).toMatch(/uses \$dynamicRef/);
  });

  it('refuses size, depth and fan-out past their limits', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 60; i++) deep = { type: 'object', properties: { n: deep } };
    expect(refusal(deep)).toMatch(/nests deeper than 48/);
    const wide = { type: 'object', anyOf: Array.from({ length: 300 }, () => ({ type: 'object' })) };
    expect(refusal(wide)).toMatch(/anyOf of 300 branches/);
    const big = { type: 'object', description: 'x'.repeat(SCHEMA_LIMITS.maxBytes) };
    expect(refusal(big)).toMatch(/bytes; untrusted schemas are read up to 262144/);
  });

  it('accepts every input schema of the 97 real tools in the catalog fixture', () => {
    const tools = loadCatalog();
    expect(tools.length).toBe(97);
    for (const t of tools) expect(refusal(t.inputSchema), `${t.server} ${t.name}`).toBeUndefined();
  });
});
