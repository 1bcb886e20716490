import type { AnyOperation } from './operation.ts';

/*
 * Where each input field of an operation travels over HTTP: path parameters are input fields of
 * the same name; a GET or DELETE carries the other fields in the query, any other method in the
 * JSON body. The API's route (src/server/api/operations.ts) reads a request this way, and the CLI
 * beside a running server writes one this way.
 */

/** An operation's fields by where they travel. */
export interface HttpLayout {
  readonly inPath: readonly string[];
  /** Whether the fields not in the path travel in the query (GET, DELETE) or the body. */
  readonly inQuery: boolean;
  /** The fields not in the path. */
  readonly rest: readonly string[];
}

export function httpLayout(op: AnyOperation): HttpLayout {
  const inPath = [...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
  return {
    inPath,
    inQuery: op.http.method === 'GET' || op.http.method === 'DELETE',
    rest: Object.keys(op.input.properties).filter((k) => !inPath.includes(k)),
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
  const given = layout.rest.filter((k) => input[k] !== undefined);
  if (layout.inQuery) {
    const query = new URLSearchParams();
    for (const k of given) query.set(k, scalarText(input[k]));
    const text = query.toString();
    return { method: op.http.method, target: text === '' ? path : `${path}?${text}` };
  }
  const body: Record<string, unknown> = {};
  for (const k of given) body[k] = input[k];
  return {
    method: op.http.method,
    target: path,
    ...(layout.rest.length > 0 ? { body } : {}),
  };
}
