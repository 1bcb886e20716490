import type { JsonObject } from '../model/json.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';

export type ModelProviderKind = 'openai_compatible' | 'scripted';

export interface ModelProviderRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: ModelProviderKind;
  readonly baseUrl: string | null;
  readonly script: JsonObject | null;
  readonly contextTokens: number;
  readonly maxOutputTokens: number;
  readonly createdAt: Date;
}

const COLUMNS = `id, name, kind, base_url as "baseUrl", script, context_tokens as "contextTokens",
  max_output_tokens as "maxOutputTokens", created_at as "createdAt"`;

export async function insertModelProvider(
  q: Queryable,
  provider: Omit<ModelProviderRecord, 'createdAt' | 'contextTokens' | 'maxOutputTokens'> &
    Partial<Pick<ModelProviderRecord, 'contextTokens' | 'maxOutputTokens'>>,
): Promise<ModelProviderRecord> {
  try {
    const { rows } = await q.query<ModelProviderRecord>(
      `insert into model_providers (id, name, kind, base_url, script, context_tokens, max_output_tokens)
       values ($1, $2, $3, $4, $5::jsonb, $6, $7) returning ${COLUMNS}`,
      [
        provider.id,
        provider.name,
        provider.kind,
        provider.baseUrl,
        provider.script === null ? null : JSON.stringify(provider.script),
        provider.contextTokens ?? 32000,
        provider.maxOutputTokens ?? 2048,
      ],
    );
    return rows[0] as ModelProviderRecord;
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new StoreError(
        'provider_exists',
        `a model provider named ${provider.name} already exists`,
      );
    }
    throw error;
  }
}

export async function findModelProvider(
  q: Queryable,
  nameOrId: string,
): Promise<ModelProviderRecord | undefined> {
  const { rows } = await q.query<ModelProviderRecord>(
    `select ${COLUMNS} from model_providers where name = $1 or id::text = $1 limit 1`,
    [nameOrId],
  );
  return rows[0];
}

export async function getModelProvider(
  q: Queryable,
  id: string,
): Promise<ModelProviderRecord | undefined> {
  const { rows } = await q.query<ModelProviderRecord>(
    `select ${COLUMNS} from model_providers where id = $1`,
    [id],
  );
  return rows[0];
}

export async function listModelProviders(q: Queryable): Promise<ModelProviderRecord[]> {
  const { rows } = await q.query<ModelProviderRecord>(
    `select ${COLUMNS} from model_providers order by name`,
  );
  return rows;
}

/** The names of the agents that use a provider, in name order. */
export async function agentsUsingProvider(q: Queryable, providerId: string): Promise<string[]> {
  const { rows } = await q.query<{ name: string }>(
    `select name from agents where model_provider_id = $1 order by name`,
    [providerId],
  );
  return rows.map((r) => r.name);
}

export async function deleteModelProviderRow(q: Queryable, providerId: string): Promise<boolean> {
  const { rowCount } = await q.query(`delete from model_providers where id = $1`, [providerId]);
  return rowCount > 0;
}
