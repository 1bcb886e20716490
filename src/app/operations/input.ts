import type { JsonSchema } from '../../model/json.ts';
import { MeshError } from '../../tool/errors.ts';

/*
 * What every operation's input is and how it is refused: below the declarations (operation.ts)
 * and the validator (validate-input.ts, which loads Ajv), so either may name them without the
 * other.
 */

/** An input object's schema: closed, each field described (the descriptions become help). */
export interface InputSchema {
  readonly type: 'object';
  readonly additionalProperties: false;
  readonly required: readonly string[];
  readonly properties: Readonly<Record<string, JsonSchema & { readonly description: string }>>;
}

/**
 * The input refused: names the field (dotted, under `input`) and what was wrong, never a value.
 * Faces rename the root to where the field came from (`body.model`, `query.status`, `--model`).
 */
export class InvalidInputError extends MeshError {
  static readonly code = 'invalid_input';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(InvalidInputError.code, message, { field });
  }
}
