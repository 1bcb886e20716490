import type { JsonValue } from '../model/json.ts';
import type { Audience } from '../policy/audience.ts';
import type { Queryable } from './db.ts';

/** A tool by the package that declares it: what an opt-out names. */
export interface PackageTool {
  readonly packageId: string;
  readonly toolName: string;
}

/** Tools an agent opted out of (enabled = false rows), each by its package and name. */
export async function listDisabledTools(q: Queryable, agentId: string): Promise<PackageTool[]> {
  const { rows } = await q.query<PackageTool>(
    `select package_id as "packageId", tool_name as "toolName" from agent_tools
      where agent_id = $1 and not enabled order by package_id, tool_name`,
    [agentId],
  );
  return rows;
}

/** Opts an agent out of one package's tool, or back in. */
export async function setToolEnabled(
  q: Queryable,
  agentId: string,
  tool: PackageTool,
  enabled: boolean,
): Promise<void> {
  await q.query(
    `insert into agent_tools (agent_id, package_id, tool_name, enabled) values ($1, $2, $3, $4)
     on conflict (agent_id, package_id, tool_name)
     do update set enabled = excluded.enabled, updated_at = now()`,
    [agentId, tool.packageId, tool.toolName, enabled],
  );
}

export interface ConfigRow {
  readonly packageId: string;
  readonly key: string;
  readonly value: JsonValue;
}

export async function listConfigValues(q: Queryable, agentId: string): Promise<ConfigRow[]> {
  const { rows } = await q.query<ConfigRow>(
    `select package_id as "packageId", key, value from agent_tool_config where agent_id = $1 order by package_id, key`,
    [agentId],
  );
  return rows;
}

/** Stores one already-validated config value. */
export async function setConfigValue(
  q: Queryable,
  agentId: string,
  packageId: string,
  key: string,
  value: JsonValue,
): Promise<void> {
  await q.query(
    `insert into agent_tool_config (agent_id, package_id, key, value) values ($1, $2, $3, $4::jsonb)
     on conflict (agent_id, package_id, key) do update set value = excluded.value, updated_at = now()`,
    [agentId, packageId, key, JSON.stringify(value)],
  );
}

export async function deleteConfigValue(
  q: Queryable,
  agentId: string,
  packageId: string,
  key: string,
): Promise<void> {
  await q.query(
    `delete from agent_tool_config where agent_id = $1 and package_id = $2 and key = $3`,
    [agentId, packageId, key],
  );
}

export async function listPackageAudiences(
  q: Queryable,
  agentId: string,
): Promise<Map<string, Audience[]>> {
  const { rows } = await q.query<{ packageId: string; audiences: Audience[] }>(
    `select package_id as "packageId", audiences from agent_package_audiences where agent_id = $1`,
    [agentId],
  );
  return new Map(rows.map((r) => [r.packageId, r.audiences]));
}

/** Limits a package to some audiences for an agent; `undefined` removes the limit. */
export async function setPackageAudiences(
  q: Queryable,
  agentId: string,
  packageId: string,
  audiences: readonly Audience[] | undefined,
): Promise<void> {
  if (audiences === undefined) {
    await q.query(`delete from agent_package_audiences where agent_id = $1 and package_id = $2`, [
      agentId,
      packageId,
    ]);
    return;
  }
  await q.query(
    `insert into agent_package_audiences (agent_id, package_id, audiences) values ($1, $2, $3::text[])
     on conflict (agent_id, package_id) do update set audiences = excluded.audiences, updated_at = now()`,
    [agentId, packageId, audiences],
  );
}
