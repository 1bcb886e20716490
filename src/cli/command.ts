/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** A command's body: its arguments (after its name) and where to write; returns the exit code. */
export type CommandBody = (args: readonly string[], io: CliIo) => Promise<number>;

/**
 * One `mesh` subcommand as `mesh --help` lists it. The body is imported only when the command
 * runs, so listing commands or printing one's usage loads none of them.
 */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** It runs turns: spans go to the operator's OTLP endpoint while it runs, when one is set. */
  readonly traced?: boolean;
  load(): Promise<CommandBody>;
}

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * A writer to a standard stream that goes quiet when its reader has gone (`mesh … | head -1`):
 * the command finishes its work and exits as it would, with nothing more written, instead of
 * dying on an unhandled EPIPE. Any other write failure is still thrown.
 */
function lineWriter(stream: NodeJS.WriteStream): (text: string) => void {
  let readerGone = false;
  let watching = false;
  return (text) => {
    if (!watching) {
      watching = true;
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
        readerGone = true;
      });
    }
    if (!readerGone) stream.write(text.endsWith('\n') ? text : `${text}\n`);
  };
}

export const processIo: CliIo = {
  out: lineWriter(process.stdout),
  err: lineWriter(process.stderr),
};

/** A subcommand's body: arguments after the subcommand's name, and where to write. */
export type Subcommand = (args: readonly string[], io: CliIo) => Promise<number> | number;

/** A command made of subcommands (`mesh agents create …`), dispatched by the first argument. */
export function commandGroup(subcommands: Readonly<Record<string, Subcommand>>): CommandBody {
  return async (args, io) => {
    const [sub, ...rest] = args;
    const body = sub === undefined ? undefined : subcommands[sub];
    if (!body || !Object.hasOwn(subcommands, sub ?? '')) {
      throw new UsageError(
        sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`,
      );
    }
    return body(rest, io);
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
