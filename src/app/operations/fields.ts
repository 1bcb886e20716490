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

/** The input of an operation on one agent and nothing else. */
export const AGENT_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['agent'],
  properties: { agent: AGENT_FIELD },
} as const;

/** A run, by its id or a prefix of it. */
export const RUN_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'the run, by its id or the first 8 or more characters of it',
} as const;

/** An agent a listing across agents is narrowed to. */
export const AGENT_FILTER_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'an agent name or id',
} as const;

/** How many a listing across agents returns: 1-500, `fallback` when not said. */
export function listLimitField<const D extends number>(fallback: D) {
  return {
    type: 'integer',
    minimum: 1,
    maximum: 500,
    description: `how many to list (1-500, default ${fallback})`,
  } as const;
}

/** How many a listing returns. */
export const LIMIT_FIELD = {
  type: 'integer',
  minimum: 1,
  maximum: 200,
  description: 'how many to return (1-200, default 50)',
} as const;

/** A list as a flag says it (`a,b`), or `all` for no limit (null): a CLI reader. */
export function listOrAll(text: string): readonly string[] | null {
  if (text === 'all') return null;
  return text
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

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
