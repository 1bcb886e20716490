import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describeSchemaError, nestingRefusal, schemaErrorField } from '../../tool/schema-errors.ts';
import { InvalidInputError, type InputSchema } from './input.ts';

/* Kept apart from the declarations: help reads them, and need not load Ajv. */

const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
const validators = new WeakMap<InputSchema, ValidateFunction>();

/** Checks `input` against an operation's input schema, refusing with the first problem. */
export function validateInput(schema: InputSchema, input: unknown): void {
  const tooDeep = nestingRefusal(input, 'input');
  if (tooDeep) throw new InvalidInputError(tooDeep.message, tooDeep.field);
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  if (validate(input)) return;
  const first = validate.errors?.[0];
  if (!first) throw new InvalidInputError('the input is not valid', 'input');
  throw new InvalidInputError(
    describeSchemaError(first).replace('the body', 'the input'),
    schemaErrorField(first, 'input'),
  );
}
