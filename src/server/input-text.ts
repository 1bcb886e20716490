import {
  findUnstorable,
  isUnstorable,
  pathStep,
  unstorableMessage,
} from '../tool/storable-text.ts';
import { HttpError } from './http-error.ts';

/** The refusal: names the field (`body.persona`, `path.agent`, `query.limit`), never its value. */
export function unstorableText(field: string, inName = false): HttpError {
  return new HttpError('invalid_text', unstorableMessage(field, inName), {}, { field });
}

/**
 * Refuses a parsed JSON value holding an unstorable text in any string or field name, naming the
 * first one found (`body.rules.0.match`).
 */
export function refuseUnstorableJson(value: unknown, root = 'body'): void {
  const at = findUnstorable(value, root);
  if (at) throw unstorableText(at.field, at.inName);
}

/**
 * Refuses name/value pairs (a query string, a posted form, path parameters) holding an unstorable
 * text, naming the pair (`form.persona`).
 */
export function refuseUnstorablePairs(
  pairs: Iterable<readonly [string, string]>,
  root: 'query' | 'form' | 'path',
): void {
  for (const [name, value] of pairs) {
    if (isUnstorable(name)) throw unstorableText(root, true);
    if (isUnstorable(value)) throw unstorableText(`${root}.${pathStep(name)}`);
  }
}
