import type { JsonSchema } from '../../src/model/json.ts';

/**
 * The schema that froze a server: `levels` definitions, each an anyOf of a `$ref` to the one
 * before and an allOf of the same `$ref`, so a check visits the first definition 2^levels times.
 */
export function doublingSchema(levels: number): JsonSchema {
  const defs: Record<string, unknown> = {
    d0: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
  };
  for (let i = 1; i <= levels; i++) {
    const ref = { $ref: `#/$defs/d${i - 1}` };
    defs[`d${i}`] = { anyOf: [ref, { allOf: [ref] }] };
  }
  return {
    type: 'object',
    $defs: defs,
    properties: { x: { $ref: `#/$defs/d${levels}` } },
  } as JsonSchema;
}
