import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../model/json.ts';
import { decodeArguments, prepareDecoder } from './decode-arguments.ts';
import { compileSchema, schemaDialect } from './schema-compiler.ts';

/** What servers on the TypeScript MCP SDK v1 send: zod-to-json-schema output, draft-07. */
const draft07: JsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    message: { type: 'string', description: 'Message to echo' },
    count: { type: 'number', exclusiveMinimum: 0 },
    point: { $ref: '#/definitions/point' },
    pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
  },
  required: ['message'],
  additionalProperties: false,
  definitions: {
    point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  },
};

const lenient = (schema: JsonSchema) => {
  prepareDecoder(schema, 'lenient');
  return (raw: string) => decodeArguments(raw, schema);
};

describe('the schema dialects remote tools are read in', () => {
  it('names the dialect of every spelling servers use, and 2020-12 when none is declared', () => {
    expect(schemaDialect({})).toBe('2020-12');
    expect(schemaDialect({ $schema: 'https://json-schema.org/draft/2020-12/schema' })).toBe(
      '2020-12',
    );
    expect(schemaDialect({ $schema: 'https://json-schema.org/draft/2019-09/schema#' })).toBe(
      '2019-09',
    );
    expect(schemaDialect({ $schema: 'http://json-schema.org/draft-07/schema#' })).toBe('draft-07');
    expect(schemaDialect({ $schema: 'https://json-schema.org/draft-07/schema' })).toBe('draft-07');
    expect(schemaDialect({ $schema: 'http://json-schema.org/draft-04/schema#' })).toBeUndefined();
    expect(schemaDialect({ $schema: 7 })).toBeUndefined();
  });

  it('validates draft-07 by draft-07 rules: tuple items, numeric exclusiveMinimum, definitions', () => {
    const decode = lenient(draft07);
    expect(decode('{"message":"hi","count":2,"point":{"x":1},"pair":["a",1]}')).toEqual({
      message: 'hi',
      count: 2,
      point: { x: 1 },
      pair: ['a', 1],
    });
    expect(() => decode('{"message":"hi","count":0}')).toThrow(/count/);
    expect(() => decode('{"message":"hi","pair":[1,"a"]}')).toThrow(/pair/);
    expect(() => decode('{"message":"hi","point":{}}')).toThrow(/point\.x|x/);
    expect(() => decode('{"message":"hi","extra":1}')).toThrow(/unknown field `extra`/);
  });

  it('reads 2019-09 with its own build', () => {
    const schema: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string' } } },
      unevaluatedProperties: false,
    };
    const decode = lenient(schema);
    expect(decode('{"tags":["a"]}')).toEqual({ tags: ['a'] });
    expect(() => decode('{"tags":[1]}')).toThrow(/tags/);
    expect(() => decode('{"other":1}')).toThrow(/other/);
  });

  it('lets a remote object take undeclared fields unless its schema closes it', () => {
    const open: JsonSchema = { type: 'object', properties: { q: { type: 'string' } } };
    expect(lenient(open)('{"q":"x","limit":5}')).toEqual({ q: 'x', limit: 5 });
    // A first-party schema that declares properties is closed: an undeclared field is a typo.
    const firstParty: JsonSchema = { type: 'object', properties: { q: { type: 'string' } } };
    expect(() => decodeArguments('{"q":"x","limit":5}', firstParty)).toThrow(/unknown field/);
  });

  it('refuses a dialect it does not read, and anything but 2020-12 in a first-party schema', () => {
    expect(() =>
      compileSchema({ $schema: 'http://json-schema.org/draft-04/schema#' }, 'lenient'),
    ).toThrow(/2020-12, 2019-09 and draft-07 are accepted/);
    expect(() => compileSchema(draft07, 'strict')).toThrow(/only JSON Schema 2020-12/);
    expect(() =>
      compileSchema(
        { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: 5 },
        'lenient',
      ),
    ).toThrow(/not valid JSON Schema draft-07/);
  });
});

describe('patterns in remote schemas', () => {
  it('are matched in linear time, as JavaScript reads them', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        a: { type: 'string', pattern: '^(a+)+$' },
        d: { type: 'string', pattern: '^\\d{2}$' },
      },
      patternProperties: { '^x_': { type: 'number' } },
      propertyNames: { pattern: '^[a-z0-9_]+$' },
    };
    const compiled = compileSchema(schema, 'lenient');
    expect(compiled.validate({ a: 'aaa', d: '12', x_1: 3 })).toEqual([]);
    // A 60-character argument would take V8's backtracking engine longer than the suite runs.
    const kinds = (v: unknown) => compiled.validate(v).map((e) => e.keyword);
    expect(kinds({ a: `${'a'.repeat(60)}!` })).toEqual(['pattern']);
    expect(kinds({ d: '123' })).toEqual(['pattern']);
    expect(kinds({ x_a: 'text' })).toEqual(['type']);
    expect(kinds({ Upper: 1 })).toContain('propertyNames');
  });

  it('refuse lookaround and backreferences, naming the pattern', () => {
    for (const pattern of ['^(?=a)a$', '^(a)\\1$', '(?<!x)y']) {
      expect(() =>
        compileSchema(
          { type: 'object', properties: { v: { type: 'string', pattern } } },
          'lenient',
        ),
      ).toThrow(/is not supported: remote schemas are matched in linear time/);
    }
  });

  it('leave first-party patterns, reviewed code, on the engine they were written for', () => {
    const compiled = compileSchema({ type: 'string', pattern: '^(?!-)[a-z-]+$' });
    expect(compiled.validate('ab-c')).toEqual([]);
    expect(compiled.validate('-ab')).toHaveLength(1);
  });
});
