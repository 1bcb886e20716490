import type { JsonObject, JsonSchema } from '../model/json.ts';
import { prepareDecoder } from '../tool/decode-arguments.ts';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Interns schema documents by their exact JSON text, so identical schemas (common across a
 * vendor's tools) become one frozen object and are compiled once: `prepareDecoder`, which the
 * registry calls too, caches by object identity. Text is compared as written, not canonicalized:
 * property order is what the model is shown, so two schemas differing only in order stay apart.
 *
 * One pool lives for one crawl or one verification; nothing is cached process-wide.
 */
export class SchemaPool {
  private readonly byText = new Map<string, JsonSchema>();
  private readonly byFileText = new Map<string, JsonSchema>();
  private readonly problems = new WeakMap<JsonSchema, string | null>();

  /** The shared frozen instance of this schema. */
  intern(schema: JsonObject): JsonSchema {
    const text = JSON.stringify(schema);
    const known = this.byText.get(text);
    if (known) return known;
    const frozen = deepFreeze(schema);
    this.byText.set(text, frozen);
    return frozen;
  }

  /**
   * The schema a file with exactly this text was interned as, so a file shared by many packages
   * is parsed once. Only texts that parsed to a JSON object are remembered.
   */
  fromFile(fileText: string): JsonSchema | undefined {
    return this.byFileText.get(fileText);
  }

  /** Interns a schema parsed from a file and remembers the file's text. */
  internFile(fileText: string, schema: JsonObject): JsonSchema {
    const interned = this.intern(schema);
    this.byFileText.set(fileText, interned);
    return interned;
  }

  /**
   * Compiles the schema exactly as the registry will (strict JSON Schema 2020-12: unknown keywords
   * are typos) and returns why it is refused, or undefined.
   */
  problem(schema: JsonSchema): string | undefined {
    const cached = this.problems.get(schema);
    if (cached !== undefined) return cached ?? undefined;
    let reason: string | null = null;
    try {
      prepareDecoder(schema, 'strict');
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error);
    }
    this.problems.set(schema, reason);
    return reason ?? undefined;
  }

  /** How many distinct schema documents were seen. */
  get size(): number {
    return this.byText.size;
  }
}
