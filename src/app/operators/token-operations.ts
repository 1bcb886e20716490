import { NO_INPUT } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * Operator tokens — the bearer credentials of the API and the UI's sign-in — as operations of the
 * catalog. A token's value exists outside the operator's hands once, in the answer that mints it;
 * only its hash is stored, so no listing ever shows one.
 */

/** An operator token as listed: its id, label and dates, never its value. */
export interface TokenAnswer {
  readonly id: string;
  readonly label: string;
  /** `operator` acts as its holder; `relay` may also post for a channel's people, by name. */
  readonly kind: 'operator' | 'relay';
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
}

const TOKEN_ID = {
  type: 'string',
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'the token, by id (see mesh tokens list)',
} as const;

function tokenJson(t: {
  id: string;
  label: string;
  kind: 'operator' | 'relay';
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}): TokenAnswer {
  return {
    id: t.id,
    label: t.label,
    kind: t.kind,
    created_at: t.createdAt.toISOString(),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

export const createTokenOperation = defineOperation({
  name: 'tokens.create',
  summary: 'Mint an operator token: its value is answered once, and only its hash is stored',
  tag: 'tokens',
  input: {
    type: 'object',
    additionalProperties: false,
    required: [],
    properties: {
      name: {
        type: 'string',
        minLength: 1,
        maxLength: 100,
        pattern: '^[^:\\s][^:]*$',
        description:
          'who holds the token: the name that labels what it does (its messages, grants and answers)',
      },
      label: {
        type: 'string',
        minLength: 1,
        maxLength: 100,
        description: 'an older word for name ("cli" when neither is given)',
      },
      relay: {
        type: 'boolean',
        description:
          'a relay token, for a channel that posts for its people (a chat bridge): it may name who a message or answer is from, and each is recorded as relayed by it (default: an operator token, which acts only as its holder)',
      },
    },
  },
  errors: [],
  http: { method: 'POST', path: '/api/tokens', status: 201 },
  cli: {
    command: ['tokens', 'create'],
    print: (out: TokenAnswer & { token: string }) => [
      `${out.kind === 'relay' ? 'Relay' : 'Operator'} token: ${out.token}`,
      `(id ${out.id}; shown once: only its hash is stored)`,
      ...(out.kind === 'relay'
        ? ['It may post as the people it names; each such message is recorded as relayed by it.']
        : []),
    ],
  },
  async run(mesh, input): Promise<TokenAnswer & { token: string }> {
    const [{ createOperatorToken }, { InvalidInputError }] = await Promise.all([
      import('./operator-auth.ts'),
      import('../operations/input.ts'),
    ]);
    const label = (input.name ?? input.label ?? 'cli').trim();
    if (label === '')
      throw new InvalidInputError('`name` is blank', input.name ? 'input.name' : 'input.label');
    const { token, record } = await createOperatorToken(
      mesh.db,
      label,
      input.relay === true ? 'relay' : 'operator',
    );
    return { token, ...tokenJson(record) };
  },
});

export const listTokensOperation = defineOperation({
  name: 'tokens.list',
  summary: 'Operator tokens with their labels and dates (never a token: only hashes are kept)',
  tag: 'tokens',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/tokens' },
  cli: {
    command: ['tokens', 'list'],
    print: (out: { tokens: readonly TokenAnswer[] }) =>
      out.tokens.length === 0
        ? ['No operator tokens yet: mesh serve creates one on first start.']
        : out.tokens.map(
            (t) =>
              `${t.id}  ${t.label}  ${t.kind}  created ${t.created_at}  ${t.revoked_at ? `revoked ${t.revoked_at}` : 'live'}`,
          ),
  },
  async run(mesh): Promise<{ tokens: TokenAnswer[] }> {
    const { listOperatorTokens } = await import('./operator-auth.ts');
    return { tokens: (await listOperatorTokens(mesh.db)).map(tokenJson) };
  },
});

export const revokeTokenOperation = defineOperation({
  name: 'tokens.revoke',
  summary: 'Revoke a live operator token and end the UI sessions it opened',
  tag: 'tokens',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: TOKEN_ID },
  },
  errors: ['token_not_found'],
  http: { method: 'DELETE', path: '/api/tokens/{id}', status: 204 },
  cli: {
    command: ['tokens', 'revoke'],
    positionals: ['id'],
    print: (_out: undefined, input) => [`Revoked ${String(input['id'])}.`],
  },
  async run(mesh, input): Promise<undefined> {
    const [{ revokeOperatorToken }, { MeshError }] = await Promise.all([
      import('./operator-auth.ts'),
      import('../../tool/errors.ts'),
    ]);
    if (!(await revokeOperatorToken(mesh.db, input.id)))
      throw new MeshError('token_not_found', `no live token with id ${input.id}`);
    return undefined;
  },
});

/** The operator tokens' operations, in the order help lists them. */
export const tokenOperations = [
  createTokenOperation,
  listTokensOperation,
  revokeTokenOperation,
] as const;
