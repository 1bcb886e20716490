/** A value that survives a JSON round trip unchanged. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;

/** A JSON object: the shape of tool arguments, schemas and structured observations. */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** A JSON Schema document (2020-12). Kept as plain JSON so no validator's types leak into contracts. */
export type JsonSchema = JsonObject;

/** Whether a value is a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a JSON value nests deeper than `max` levels of objects and arrays (a scalar is level 0).
 * Walked with a stack, never recursion: the value may be hostile, deep enough that a recursive
 * walker (JSON.stringify among them) overflows the call stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item))
      stack.push([child, depth + 1]);
  }
  return false;
}
