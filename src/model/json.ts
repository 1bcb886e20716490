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
