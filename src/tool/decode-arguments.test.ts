import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../test/fixtures/mcp-catalog.ts';
import type { JsonSchema } from '../model/json.ts';
import { validatorSuffices } from './argument-shape.ts';
import { ARGUMENT_LIMITS, decodeArguments } from './decode-arguments.ts';
import { hasCode, InvalidToolInputError } from './errors.ts';

const issueSchema: JsonSchema = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1 },
    priority: { type: 'integer', minimum: 0, maximum: 4 },
    state: { enum: ['open', 'closed'] },
    labels: { type: 'array', items: { type: 'string' } },
    assignee: {
      type: 'object',
      properties: { login: { type: 'string' }, team: { type: ['string', 'null'] } },
      required: ['login'],
    },
    meta: { type: 'object', additionalProperties: true },
  },
  required: ['title'],
};

function refusal(raw: string, schema: JsonSchema = issueSchema): InvalidToolInputError {
  try {
    decodeArguments(raw, schema);
  } catch (error) {
    expect(hasCode(error, InvalidToolInputError.code)).toBe(true);
    return error as InvalidToolInputError;
  }
  throw new Error(`expected a refusal for ${raw}`);
}

describe('decodeArguments', () => {
  it('returns the decoded object for valid arguments', () => {
    const args = decodeArguments(
      '{"title":"Fix it","priority":2,"labels":["bug"],"assignee":{"login":"ada","team":null},"meta":{"x":1}}',
      issueSchema,
    );
    expect(args).toEqual({
      title: 'Fix it',
      priority: 2,
      labels: ['bug'],
      assignee: { login: 'ada', team: null },
      meta: { x: 1 },
    });
  });

  it.each([
    ['null', 'not null'],
    ['[]', 'not an array'],
    ['"title"', 'not a string'],
    ['42', 'not an integer'],
    ['4.5', 'not a number'],
    ['true', 'not a boolean'],
  ])('refuses a top-level %s', (raw, expected) => {
    expect(refusal(raw).message).toContain(`must be a JSON object, ${expected}`);
  });

  it('refuses empty arguments and text that is not JSON', () => {
    expect(refusal('').message).toContain('arguments are empty');
    expect(refusal('   ').message).toContain('arguments are empty');
    expect(refusal('{"title": sekrit}').message).toContain('not valid JSON');
    expect(refusal('{"title": sekrit}').message).not.toContain('sekrit');
  });

  it('refuses anything after the object without echoing it', () => {
    const error = refusal('{"title":"a"} {"title":"hidden-payload"}');
    expect(error.message).toContain('unexpected content after the arguments object');
    expect(error.message).not.toContain('hidden-payload');
    expect(refusal('{"title":"a"}garbage').message).toContain('unexpected content after');
    expect(refusal('{"title":"a"}}').message).toContain('unexpected content after');
  });

  it('names an unknown top-level field and the accepted fields', () => {
    const error = refusal('{"title":"a","label":"do-not-echo"}');
    expect(error.message).toContain('unknown field `label`');
    expect(error.message).toContain('title, priority, state, labels, assignee, meta');
    expect(error.message).not.toContain('do-not-echo');
  });

  it('names an unknown nested field with its path and the fields accepted there', () => {
    const error = refusal('{"title":"a","assignee":{"login":"x","email":"secret@example.com"}}');
    expect(error.message).toContain('unknown field `assignee.email`');
    expect(error.message).toContain('accepted fields at `assignee` are: login, team');
    expect(error.message).not.toContain('secret@example.com');
  });

  it('allows undeclared fields where the schema explicitly allows them', () => {
    expect(
      decodeArguments('{"title":"a","meta":{"anything":{"deep":[1]}}}', issueSchema),
    ).toBeTruthy();
    const open: JsonSchema = {
      type: 'object',
      properties: { a: { type: 'string' } },
      additionalProperties: true,
    };
    expect(decodeArguments('{"a":"x","b":2}', open)).toEqual({ a: 'x', b: 2 });
  });

  it('treats an object schema without properties as free-form', () => {
    expect(decodeArguments('{"anything":1}', { type: 'object' })).toEqual({ anything: 1 });
  });

  it('refuses an explicit additionalProperties: false too', () => {
    const closed: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };
    expect(refusal('{"x":1}', closed).message).toContain(
      'unknown field `x`; the accepted fields are: none',
    );
  });

  it('names the field and expected kind on a wrong type, never the value', () => {
    const error = refusal('{"title":12345678,"priority":"urgent-value"}');
    expect(error.message).toContain('field `title` must be a string, not an integer');
    expect(error.message).toContain('field `priority` must be an integer, not a string');
    expect(error.message).not.toContain('urgent-value');
    expect(error.message).not.toContain('12345678');
    expect(refusal('{"title":"a","priority":1.5}').message).toContain(
      'must be an integer, not a number',
    );
    expect(refusal('{"title":"a","labels":["ok",7]}').message).toContain(
      'field `labels[1]` must be a string',
    );
    expect(refusal('{"title":"a","assignee":{"login":"x","team":3}}').message).toContain(
      'field `assignee.team` must be a string or null',
    );
  });

  it('names missing required fields at every level', () => {
    expect(refusal('{}').message).toContain('missing required field `title`');
    expect(refusal('{"title":"a","assignee":{}}').message).toContain(
      'missing required field `assignee.login`',
    );
  });

  it('refuses values outside the schema’s other rules without echoing them', () => {
    const error = refusal('{"title":"a","priority":9,"state":"reopened-x"}');
    expect(error.message).toContain('field `priority` must be <= 4');
    expect(error.message).toContain('field `state` must be one of: "open", "closed"');
    expect(error.message).not.toContain('reopened-x');
  });

  it('follows local $refs and allOf when deciding which fields exist', () => {
    const schema: JsonSchema = {
      type: 'object',
      $defs: { person: { type: 'object', properties: { name: { type: 'string' } } } },
      allOf: [{ properties: { owner: { $ref: '#/$defs/person' } } }],
      properties: { id: { type: 'string' } },
    };
    expect(decodeArguments('{"id":"1","owner":{"name":"a"}}', schema)).toBeTruthy();
    expect(refusal('{"id":"1","owner":{"nick":"a"}}', schema).message).toContain(
      'unknown field `owner.nick`',
    );
    expect(refusal('{"id":"1","extra":1}', schema).message).toContain(
      'accepted fields are: id, owner',
    );
  });

  it('accepts fields declared by any anyOf branch and reports a branch mismatch once', () => {
    const schema: JsonSchema = {
      type: 'object',
      anyOf: [
        { properties: { path: { type: 'string' } }, required: ['path'] },
        { properties: { url: { type: 'string', format: 'uri' } }, required: ['url'] },
      ],
    };
    expect(decodeArguments('{"url":"https://example.com"}', schema)).toBeTruthy();
    expect(refusal('{"other":1}', schema).message).toContain(
      'unknown field `other`; the accepted fields are: path, url',
    );
    expect(refusal('{"url":"not a uri"}', schema).message).toContain(
      'does not match any of the accepted forms',
    );
  });

  it('bounds nesting depth instead of recursing without limit', () => {
    const deep = `{"meta":{"x":${'['.repeat(200)}${']'.repeat(200)}},"title":"a"}`;
    expect(refusal(deep).message).toContain('nests deeper than 64 levels');
  });

  it('refuses oversized arguments before parsing them', () => {
    const big = `{"title":"${'x'.repeat(1024 * 1024)}"}`;
    expect(refusal(big).message).toContain('exceed');
  });
});

describe('decodeArguments on the fixture catalog (property)', () => {
  const catalog = loadCatalog();
  const schemas = catalog.map((t) => t.inputSchema);
  const schemaArb = fc.constantFrom(...schemas);

  it('never throws anything but InvalidToolInputError on arbitrary JSON text', () => {
    let refusals = 0;
    fc.assert(
      fc.property(
        schemaArb,
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.json().map((j) => `${j} ${j}`),
        ),
        (schema, raw) => {
          try {
            const value = decodeArguments(raw, schema);
            expect(typeof value).toBe('object');
          } catch (error) {
            refusals++;
            expect(hasCode(error, InvalidToolInputError.code)).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
    expect(refusals).toBeGreaterThan(0);
  });

  it('never echoes a string value from the input in a refusal', () => {
    const canary = fc.stringMatching(/^[A-Za-z0-9]{10,16}$/).map((s) => `CANARY${s}`);
    const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        canary,
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'name', 'path', 'owner', 'repo', 'query'), tie('v'), {
          maxKeys: 3,
        }),
      ),
    })).v;
    let refusals = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...catalog),
        fc.array(value, { maxLength: 6 }),
        fc.boolean(),
        fc.constantFrom('', ' trailing', '}', ' {"x":1}'),
        (tool, values, addUnknown, suffix) => {
          const names = Object.keys((tool.inputSchema['properties'] as object | undefined) ?? {});
          const args: Record<string, unknown> = {};
          values.forEach((v, i) => {
            const name = names[i % Math.max(1, names.length)];
            if (name !== undefined) args[name] = v;
          });
          if (addUnknown) args['unexpectedField'] = values[0] ?? 'CANARYunknownfield';
          const raw = JSON.stringify(args) + suffix;
          const planted = raw.match(/CANARY[A-Za-z0-9]+/g) ?? [];
          try {
            decodeArguments(raw, tool.inputSchema);
          } catch (error) {
            refusals++;
            expect(hasCode(error, InvalidToolInputError.code)).toBe(true);
            const text = `${(error as Error).message} ${JSON.stringify(error)}`;
            for (const c of planted) expect(text).not.toContain(c);
          }
        },
      ),
      { numRuns: 3000 },
    );
    expect(refusals).toBeGreaterThan(100);
  });
});

describe('the validator alone accepting a plain schema’s call (property)', () => {
  const catalog = loadCatalog();
  const plain = catalog.filter((t) => validatorSuffices(t.inputSchema, ARGUMENT_LIMITS.maxDepth));

  it('applies to the closed, typed schemas and to nothing with combinators, refs or open objects', () => {
    expect(plain.length).toBeGreaterThan(10);
    expect(validatorSuffices(issueSchema, ARGUMENT_LIMITS.maxDepth)).toBe(false);
    const closed = {
      type: 'object',
      additionalProperties: false,
      properties: { a: { type: 'string' } },
    };
    expect(validatorSuffices(closed, ARGUMENT_LIMITS.maxDepth)).toBe(true);
    for (const open of [
      { ...closed, additionalProperties: true },
      { ...closed, properties: { a: { anyOf: [{ type: 'string' }] } } },
      { ...closed, properties: { a: { type: 'array' } } },
      { ...closed, properties: { a: { $ref: '#' } } },
      { ...closed, properties: { a: {} } },
    ])
      expect(validatorSuffices(open, ARGUMENT_LIMITS.maxDepth)).toBe(false);
  });

  it('decides every call as the shape walk does, in the same words', () => {
    const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.string({ maxLength: 8 }),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.constant(JSON.parse(`${'['.repeat(70)}${']'.repeat(70)}`) as unknown),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'name', 'owner', 'repo', 'query', 'path'), tie('v'), {
          maxKeys: 3,
        }),
      ),
    })).v;
    const outcome = (raw: string, schema: JsonSchema) => {
      try {
        return { value: decodeArguments(raw, schema) };
      } catch (error) {
        return { refused: (error as Error).message };
      }
    };
    // The same schemas with a rule that never fires (the arguments are an object) but makes each
    // one the walk must check: the old path, for comparison. Made once: schemas compile once.
    const walkedSchemas = new Map(
      plain.map((t) => [t, { ...t.inputSchema, not: { type: 'null' } }] as const),
    );
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...plain),
        fc.array(value, { maxLength: 6 }),
        fc.boolean(),
        (tool, values, addUnknown) => {
          const names = Object.keys((tool.inputSchema['properties'] as object | undefined) ?? {});
          const args: Record<string, unknown> = {};
          values.forEach((v, i) => {
            const name = names[i % Math.max(1, names.length)];
            if (name !== undefined) args[name] = v;
          });
          for (const name of (tool.inputSchema['required'] as string[] | undefined) ?? [])
            if (!(name in args) && values.length > 3) args[name] = 'x';
          if (addUnknown) args['unexpectedField'] = values[0] ?? 1;
          const raw = JSON.stringify(args);
          const walked = walkedSchemas.get(tool) ?? tool.inputSchema;
          const fast = outcome(raw, tool.inputSchema);
          if ('value' in fast) accepted++;
          expect(fast).toEqual(outcome(raw, walked));
        },
      ),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});
