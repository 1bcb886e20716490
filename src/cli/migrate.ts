import { applyMigrations } from '../app/migrations.ts';
import { UsageError, type CommandBody } from './command.ts';

/** `mesh migrate`: applies pending database migrations. */
export const migrateCommand: CommandBody = async (args, io) => {
  if (args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args[0])}`);
  const outcome = await applyMigrations();
  switch (outcome.kind) {
    case 'applied':
      io.out(
        outcome.applied.length === 0
          ? `Database is up to date (${outcome.total} migrations).`
          : `Applied ${outcome.applied.length} migration(s): ${outcome.applied.join(', ')} (${outcome.total} in all).`,
      );
      return 0;
    case 'served':
      io.out(
        `The embedded database is served by process ${outcome.pid}${outcome.url ? ` (${outcome.url})` : ''}, which applied its migrations when it started; to apply newer ones, stop it and run mesh migrate.`,
      );
      return 0;
    default: {
      const never: never = outcome;
      throw new Error(`unexpected outcome ${JSON.stringify(never)}`);
    }
  }
};
