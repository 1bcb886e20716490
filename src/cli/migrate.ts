import { connect, connectOptionsFromEnv } from '../store/connect.ts';
import { loadMigrations, migrate } from '../store/migrate.ts';
import { UsageError, type Command } from './command.ts';

/** `mesh migrate`: applies pending database migrations. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending database migrations',
  usage: [
    'Usage: mesh migrate',
    '',
    'Applies the numbered migrations this Mesh ships, in order, each in its own transaction, under',
    'an advisory lock (safe while other replicas start). Uses DATABASE_URL when set, otherwise the',
    'embedded database in $MESH_HOME (default ./.mesh).',
  ].join('\n'),
  async run(args, io) {
    if (args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args[0])}`);
    const db = await connect(connectOptionsFromEnv());
    try {
      const applied = await migrate(db);
      const total = loadMigrations().length;
      io.out(
        applied.length === 0
          ? `Database is up to date (${total} migrations).`
          : `Applied ${applied.length} migration(s): ${applied.join(', ')} (${total} in all).`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
};
