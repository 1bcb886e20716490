/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** One `mesh` subcommand. `run` returns the process exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: readonly string[], io: CliIo): Promise<number>;
}

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** A subcommand's body: arguments after the subcommand's name, and where to write. */
export type Subcommand = (args: readonly string[], io: CliIo) => Promise<number> | number;

/** A command made of subcommands (`mesh agents create …`), dispatched by the first argument. */
export function commandGroup(spec: {
  name: string;
  summary: string;
  usage: string;
  subcommands: Readonly<Record<string, Subcommand>>;
}): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    usage: spec.usage,
    async run(args, io) {
      const [sub, ...rest] = args;
      const body = sub === undefined ? undefined : spec.subcommands[sub];
      if (!body || !Object.hasOwn(spec.subcommands, sub ?? '')) {
        throw new UsageError(
          sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`,
        );
      }
      return body(rest, io);
    },
  };
}

/**
 * Prints a listing the way every `list` subcommand does: the JSON rows with `--json`, otherwise
 * one line per row, or a hint when there are none.
 */
export function printList<T>(
  io: CliIo,
  listing: {
    json: boolean;
    rows: readonly T[];
    empty: string;
    line: (row: T) => string;
    toJson?: (row: T) => unknown;
  },
): void {
  const { rows } = listing;
  if (listing.json)
    io.out(JSON.stringify(listing.toJson ? rows.map(listing.toJson) : rows, null, 2));
  else if (rows.length === 0) io.out(listing.empty);
  else for (const row of rows) io.out(listing.line(row));
}
