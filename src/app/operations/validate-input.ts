import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describeSchemaError, schemaErrorField } from '../../tool/schema-errors.ts';
import { InvalidInputError, type AnyOperation, type InputSchema } from './operation.ts';

/* Kept apart from the declarations: help reads them, and need not load Ajv. */

const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
const validators = new WeakMap<InputSchema, ValidateFunction>();

/** Checks `input` against the operation's schema, refusing with the first problem. */
export function validateInput(op: AnyOperation, input: unknown): void {
  let validate = validators.get(op.input);
  if (!validate) validators.set(op.input, (validate = ajv.compile(op.input)));
  if (validate(input)) return;
  const first = validate.errors?.[0];
  if (!first) throw new InvalidInputError('the input is not valid', 'input');
  throw new InvalidInputError(
    describeSchemaError(first).replace('the body', 'the input'),
    schemaErrorField(first, 'input'),
  );
}
