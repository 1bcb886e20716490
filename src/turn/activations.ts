import { createHash } from 'node:crypto';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { Definition } from '../tool/definition.ts';
import type { Registry } from '../tool/registry.ts';

/**
 * A tool a search loaded, as the run's checkpoint records it: a request to load it again when the
 * run goes on, never a grant. The fingerprint is of the definition the model was shown, so a tool
 * redefined while the run waited is told apart from the one it loaded.
 */
export interface Activation {
  readonly name: string;
  readonly fingerprint: string;
}

/** An activation the authority a run has now no longer allows, and why, for the model. */
export interface RefusedActivation {
  readonly name: string;
  readonly reason: string;
}

/** The checkpoint key activations live under (the rest of the checkpoint is the driver's). */
const KEY = 'activations';

function canonical(value: JsonValue | undefined): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const object = value as JsonObject;
  return `{${Object.keys(object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`)
    .join(',')}}`;
}

const fingerprints = new WeakMap<Definition, string>();

/**
 * SHA-256 of what the model is shown of a definition (name, description, parameters, output
 * schema) and, for a remote one, of the server's whole definition (its MCP fingerprint, which
 * covers annotations too). Semantics (query or effect) are left out: they are decided again at
 * every call, the same way whether a tool was loaded or not.
 */
export function definitionFingerprint(d: Definition): string {
  let f = fingerprints.get(d);
  if (f === undefined) {
    f = createHash('sha256')
      .update(
        canonical({
          name: d.tool.name,
          description: d.tool.description,
          parameters: d.tool.parameters,
          output: d.outputSchema ?? null,
          remote: d.origin.source === 'remote' ? d.origin.digest : null,
        }),
      )
      .digest('hex');
    fingerprints.set(d, f);
  }
  return f;
}

/** The activations a checkpoint records, least recently used first; [] when it has none. */
export function activationsIn(checkpoint: JsonObject): Activation[] {
  const raw = checkpoint[KEY];
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: JsonValue) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return [];
    const { name, fingerprint } = entry as JsonObject;
    return typeof name === 'string' && typeof fingerprint === 'string'
      ? [{ name, fingerprint }]
      : [];
  });
}

/** `checkpoint` with its activations replaced. */
export function withActivations(
  checkpoint: JsonObject,
  activations: readonly Activation[],
): JsonObject {
  return { ...checkpoint, [KEY]: activations.map((a) => ({ ...a })) };
}

/**
 * Looks each recorded activation up in the registry the run has now: one no longer there was
 * revoked (or is no longer offered here), one whose fingerprint changed was redefined; both are
 * refused. What is kept keeps its order.
 */
export function reactivate(
  recorded: readonly Activation[],
  registry: Registry,
): { kept: Definition[]; refused: RefusedActivation[] } {
  const kept: Definition[] = [];
  const refused: RefusedActivation[] = [];
  for (const a of recorded) {
    const d = registry.get(a.name);
    if (!d) refused.push({ name: a.name, reason: 'it is no longer granted to you' });
    else if (definitionFingerprint(d) !== a.fingerprint)
      refused.push({ name: a.name, reason: 'its definition changed since you loaded it' });
    else kept.push(d);
  }
  return { kept, refused };
}
