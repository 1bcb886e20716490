import { describe, expect, it } from 'vitest';
import type { InputSchema } from './input.ts';
import { MAX_INPUT_DEPTH } from '../../tool/schema-errors.ts';
import { validateInput } from './validate-input.ts';

const schema: InputSchema = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    name: { type: 'string', description: 'a name' },
    arguments: { type: ['object', 'array'], description: 'the arguments' },
  },
};

/** An object nested `depth` levels deep, its innermost field holding a marked text. */
function nested(depth: number, arrays = false): unknown {
  let value: unknown = 'SECRET-VALUE';
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
  return value;
}

function refusal(input: unknown): { code?: string; field?: unknown; message: string } {
  try {
    validateInput(schema, input);
  } catch (error) {
    const e = error as { code?: string; data?: { field?: unknown }; message: string };
    return { code: e.code, field: e.data?.field, message: e.message };
  }
  throw new Error('accepted');
}

describe("an operation's input nesting", () => {
  it('accepts a field nested as deep as the limit', () => {
    expect(() => validateInput(schema, { arguments: nested(MAX_INPUT_DEPTH) })).not.toThrow();
    expect(() => validateInput(schema, { arguments: nested(MAX_INPUT_DEPTH, true) })).not.toThrow();
  });

  it('refuses a field one level deeper, or far deeper, naming it and not its value', () => {
    for (const depth of [MAX_INPUT_DEPTH + 1, 100_000]) {
      for (const arrays of [false, true]) {
        const r = refusal({ name: 'x', arguments: nested(depth, arrays) });
        expect(r).toMatchObject({ code: 'invalid_input', field: 'input.arguments' });
        expect(r.message).toBe(
          `field \`arguments\` nests deeper than ${MAX_INPUT_DEPTH} levels of objects and arrays`,
        );
      }
    }
  });

  it('refuses a whole input nested too deep before the schema sees it', () => {
    const r = refusal(nested(100_000, true));
    expect(r).toMatchObject({ code: 'invalid_input', field: 'input' });
    expect(r.message).not.toContain('SECRET');
  });
});
