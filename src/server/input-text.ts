import { HttpError } from './http-error.ts';

/**
 * A NUL character or a UTF-16 surrogate that is not half of a pair. Neither can be stored: a
 * PostgreSQL `text` refuses NUL, `jsonb` refuses `\u0000` and a lone `\ud800`, and UTF-8 has no
 * encoding for a lone surrogate (it would be stored silently changed). With the `u` flag a pair is
 * one code point, so `\p{Cs}` matches only a surrogate left alone.
 */
const UNSTORABLE = /[\0\p{Cs}]/u;

/** Whether a text holds a character Mesh refuses to store. */
export function isUnstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/** One step of a field's path as the refusal names it: a short name, never a long value. */
function step(name: string): string {
  const shown = name.replace(/[^\x20-\x7e]/g, '?');
  return shown.length > 64 ? `${shown.slice(0, 64)}…` : shown;
}

/** The refusal: names the field (`body.persona`, `path.agent`, `query.limit`), never its value. */
export function unstorableText(field: string, what = 'holds'): HttpError {
  return new HttpError(
    400,
    'invalid_text',
    `\`${field}\` ${what} a NUL character or an unpaired surrogate, which cannot be stored`,
    {},
    { field },
  );
}

/**
 * Refuses a parsed JSON value holding an unstorable text in any string or field name, naming the
 * first one found (`body.rules.0.match`). Walks with an explicit stack, so no nesting depth the
 * body limit lets through can overflow the call stack.
 */
export function refuseUnstorableJson(value: unknown, root = 'body'): void {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [item, at] = stack.pop() as [unknown, string];
    if (typeof item === 'string') {
      if (isUnstorable(item)) throw unstorableText(at);
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${at}.${i}`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i] as [string, unknown];
        if (isUnstorable(key)) throw unstorableText(at, 'has a field name holding');
        stack.push([inner, `${at}.${step(key)}`]);
      }
    }
  }
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
    if (isUnstorable(name)) throw unstorableText(root, 'has a name holding');
    if (isUnstorable(value)) throw unstorableText(`${root}.${step(name)}`);
  }
}
