import { parseArgs } from 'node:util';
import { withMesh } from '../app/mesh.ts';
import { createOperatorToken } from '../app/operator-auth.ts';
import { listOperatorTokens, revokeOperatorToken } from '../store/operator-auth.ts';
import { commandGroup, printList, UsageError, type CliIo, type Command } from './command.ts';

const USAGE = `Usage:
  mesh tokens create [--label L]   mint an operator token; printed once, only its hash is kept
  mesh tokens list [--json]        tokens with their labels and dates (never the tokens)
  mesh tokens revoke ID            revoke a token and end the UI sessions it opened`;

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { label: { type: 'string', default: 'cli' } },
  });
  const label = values.label.trim();
  if (label === '' || label.length > 100) throw new UsageError('--label is 1-100 characters');
  return withMesh(async (mesh) => {
    const { token, record } = await createOperatorToken(mesh.db, label);
    io.out(`Operator token: ${token}`);
    io.out(`(id ${record.id}; shown once: only its hash is stored)`);
    return 0;
  });
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  return withMesh(async (mesh) => {
    printList(io, {
      json: values.json,
      rows: await listOperatorTokens(mesh.db),
      toJson: (t) => ({
        id: t.id,
        label: t.label,
        created_at: t.createdAt,
        last_used_at: t.lastUsedAt,
        revoked_at: t.revokedAt,
      }),
      empty: 'No operator tokens yet: mesh serve creates one on first start.',
      line: (t) =>
        `${t.id}  ${t.label}  created ${t.createdAt.toISOString()}  ${
          t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : 'live'
        }`,
    });
    return 0;
  });
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const id = args[0];
  if (!id || args.length > 1) throw new UsageError('name exactly one token id');
  if (!/^[0-9a-f-]{36}$/i.test(id))
    throw new UsageError('a token id is a UUID (see mesh tokens list)');
  return withMesh(async (mesh) => {
    if (!(await revokeOperatorToken(mesh.db, id))) {
      io.err(`mesh tokens revoke: no live token with id ${id}`);
      return 1;
    }
    io.out(`Revoked ${id}.`);
    return 0;
  });
}

/** `mesh tokens …`: operator tokens for the API and the web UI. */
export const tokensCommand: Command = commandGroup({
  name: 'tokens',
  summary: 'Create, list and revoke operator tokens',
  usage: USAGE,
  subcommands: { create, list, revoke },
});
