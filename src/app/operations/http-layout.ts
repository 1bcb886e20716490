import type { AnyOperation } from './operation.ts';

/*
 * Where each input field of an operation travels over HTTP: path parameters are input fields of
 * the same name; a GET or DELETE carries the other fields in the query, any other method in the
 * JSON body (but for fields its HTTP face declares as query parameters). The API's route (src/server/api/operations.ts) reads a request this way, and the CLI
 * beside a running server writes one this way.
 */

/** An operation's fields by where they travel. */
export interface HttpLayout {
  readonly inPath: readonly string[];
  /** The fields in the query: all but the path's for a GET or DELETE, else those declared so. */
  readonly inQuery: readonly string[];
  /** The fields in the JSON body (none for a GET or DELETE). */
  readonly inBody: readonly string[];
}

export function httpLayout(op: AnyOperation): HttpLayout {
  const inPath = [...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
  const rest = Object.keys(op.input.properties).filter((k) => !inPath.includes(k));
  const bodiless = op.http.method === 'GET' || op.http.method === 'DELETE';
  const declared = op.http.query ?? [];
  return {
    inPath,
    inQuery: bodiless ? rest : rest.filter((k) => declared.includes(k)),
    inBody: bodiless ? [] : rest.filter((k) => !declared.includes(k)),
  };
}

/** A path or query field's text: the CLI reads such fields as text, numbers and booleans. */
function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

/** A request for an operation: its method, its path with the query, and its JSON body. */
export interface OperationRequest {
  readonly method: string;
  readonly target: string;
  readonly body?: Record<string, unknown>;
}

/** Writes the HTTP request that asks for `op` with `input` (an input of scalars in the query). */
export function operationRequest(
  op: AnyOperation,
  input: Readonly<Record<string, unknown>>,
): OperationRequest {
  const layout = httpLayout(op);
  const path = op.http.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(scalarText(input[name])),
  );
  const query = new URLSearchParams();
  for (const k of layout.inQuery) if (input[k] !== undefined) query.set(k, scalarText(input[k]));
  const text = query.toString();
  const target = text === '' ? path : `${path}?${text}`;
  if (layout.inBody.length === 0 && op.http.method !== 'POST' && op.http.method !== 'PUT')
    return { method: op.http.method, target };
  const body: Record<string, unknown> = {};
  for (const k of layout.inBody) if (input[k] !== undefined) body[k] = input[k];
  return { method: op.http.method, target, ...(layout.inBody.length > 0 ? { body } : {}) };
}
