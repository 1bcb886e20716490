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

/** One step of a field's path as a refusal names it: a short name, never a long value. */
export function pathStep(name: string): string {
  const shown = name.replace(/[^\x20-\x7e]/g, '?');
  return shown.length > 64 ? `${shown.slice(0, 64)}…` : shown;
}

/** Where a value holds an unstorable text: the field's path, and whether a name holds it. */
export interface UnstorableAt {
  readonly field: string;
  readonly inName: boolean;
}

const under = (at: string, step: string) => (at === '' ? step : `${at}.${step}`);

/**
 * The first string or field name in a JSON-like value that holds an unstorable text, as a path
 * from `root` (`body.rules.0.match`; `rules.0.match` from an empty root), or undefined. Walks with an explicit stack, so no nesting
 * depth can overflow the call stack.
 */
export function findUnstorable(value: unknown, root: string): UnstorableAt | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [item, at] = stack.pop() as [unknown, string];
    if (typeof item === 'string') {
      if (isUnstorable(item)) return { field: at, inName: false };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], under(at, String(i))]);
    } else if (typeof item === 'object' && item !== null && !ArrayBuffer.isView(item)) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i] as [string, unknown];
        if (isUnstorable(key)) return { field: at === '' ? 'input' : at, inName: true };
        stack.push([inner, under(at, pathStep(key))]);
      }
    }
  }
  return undefined;
}

/** The refusal's message: names the field, never its value. */
export function unstorableMessage(field: string, inName = false): string {
  return `\`${field}\` ${inName ? 'has a field name holding' : 'holds'} a NUL character or an unpaired surrogate, which cannot be stored`;
}
