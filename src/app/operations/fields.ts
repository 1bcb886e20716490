/*
 * Input fields that many operations share, declared once. Each is a literal (`as const`), so an
 * operation's input type is still inferred from the schema that validates it.
 */

/** An agent, named by the caller. */
export const AGENT_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'the agent, by name or id',
} as const;

/** A package, by its id. */
export const PACKAGE_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'the package, by id (mesh.linear)',
} as const;

/** A registered name (an agent's, a provider's, a backend's), with what it names. */
export function nameField<const D extends string>(description: D) {
  return { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description } as const;
}

/** The input of an operation that takes none. */
export const NO_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {},
} as const;
