import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Creates a fresh database on the server DATABASE_URL points at and returns its URL.
 * DATABASE_URL names the run's own database (CI creates it); each user gets another beside it.
 */
export async function freshPostgresUrl(
  base = process.env['DATABASE_URL'],
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!base) throw new Error('DATABASE_URL is not set');
  const name = `mesh_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
