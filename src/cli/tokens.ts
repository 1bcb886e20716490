import { parseArgs } from 'node:util';
import { withUseCases } from '../app/use-case-client.ts';
import { commandGroup, printList, UsageError, type CliIo, type CommandBody } from './command.ts';

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { label: { type: 'string', default: 'cli' } },
  });
  const label = values.label.trim();
  if (label === '' || label.length > 100) throw new UsageError('--label is 1-100 characters');
  const { token, record } = await withUseCases((call) => call('tokens.create', { label }));
  io.out(`Operator token: ${token}`);
  io.out(`(id ${record.id}; shown once: only its hash is stored)`);
  return 0;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  printList(io, {
    json: values.json,
    rows: await withUseCases((call) => call('tokens.list', {})),
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
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const id = args[0];
  if (!id || args.length > 1) throw new UsageError('name exactly one token id');
  if (!/^[0-9a-f-]{36}$/i.test(id))
    throw new UsageError('a token id is a UUID (see mesh tokens list)');
  if (!(await withUseCases((call) => call('tokens.revoke', { id })))) {
    io.err(`mesh tokens revoke: no live token with id ${id}`);
    return 1;
  }
  io.out(`Revoked ${id}.`);
  return 0;
}

/** `mesh tokens …`: operator tokens for the API and the web UI. */
export const tokensCommand: CommandBody = commandGroup({ create, list, revoke });
