import type { HookContext, HookOutcome } from '../../src/tool/hook.ts';
import { connect, deliveryError, linearFailure, readById, type Request } from './linear-client.ts';
import { linearSettings, type LinearSettings } from './settings.ts';

/*
 * mesh.linear's lifecycle hooks, run only by the lifecycle executor. With `webhook_url` set, an
 * install has a Linear webhook for the agent's account: made when the package is enabled (its id
 * is the transition's idempotency key, so a retried attempt finds what an earlier one made),
 * removed when it is disabled, and checked by the health check. A rotated key is tried before
 * Mesh cuts over to it.
 */

interface WebhookNode {
  readonly id: string;
  readonly url: string;
  readonly enabled: boolean;
}

const WEBHOOK_FIELDS = 'id url enabled';
/** The events the webhook asks Linear for. */
const RESOURCE_TYPES = ['Issue', 'Comment'];

/** The webhook id the install keeps, if it has one. */
function keptWebhook(ctx: HookContext): string | undefined {
  const id = ctx.state['webhook_id'];
  return typeof id === 'string' ? id : undefined;
}

/** A Linear failure as the hook's outcome: a lost answer or a rate limit is tried again. */
function outcomeOf(what: string, settings: LinearSettings, error: unknown): HookOutcome {
  const failure = deliveryError(what, settings, error);
  return failure.failure === 'terminal'
    ? { kind: 'terminal', reason: failure.message }
    : { kind: 'retryable', reason: failure.message };
}

function readWebhook(request: Request, id: string): Promise<WebhookNode | undefined> {
  return readById<WebhookNode>(request, 'webhook', WEBHOOK_FIELDS, id);
}

/** The install's settings and a connection, or the terminal outcome that says why not. */
async function opened(
  ctx: HookContext,
): Promise<{ settings: LinearSettings; request: Request } | { outcome: HookOutcome }> {
  const checked = linearSettings(ctx.config);
  if (!checked.ok) return { outcome: { kind: 'terminal', reason: checked.problem } };
  return { settings: checked.settings, request: await connect(ctx, checked.settings) };
}

/**
 * on_enable (and an upgrade's re-run): makes the install's webhook match the settings. A webhook
 * the install already keeps is updated in place (or removed when `webhook_url` was cleared);
 * otherwise one is made with the transition's key as its id, found again rather than made twice
 * when an earlier attempt's answer was lost.
 */
export async function registerWebhook(ctx: HookContext): Promise<HookOutcome> {
  const open = await opened(ctx);
  if ('outcome' in open) return open.outcome;
  const { settings, request } = open;
  const kept = keptWebhook(ctx);
  try {
    const existing = kept === undefined ? undefined : await readWebhook(request, kept);
    if (settings.webhookUrl === undefined) {
      if (existing) await deleteWebhook(request, existing.id);
      return { kind: 'success', state: {} };
    }
    if (existing) {
      if (existing.url !== settings.webhookUrl)
        await request(
          `mutation MeshWebhookUpdate($id: String!, $input: WebhookUpdateInput!) { webhookUpdate(id: $id, input: $input) { success webhook { ${WEBHOOK_FIELDS} } } }`,
          { id: existing.id, input: { url: settings.webhookUrl } },
        );
      return { kind: 'success', state: { webhook_id: existing.id } };
    }
    const id = ctx.idempotencyKey.uuid;
    // An earlier attempt of this transition may have made it before its answer was lost.
    if (!(await readWebhook(request, id))) {
      await request(
        `mutation MeshWebhookCreate($input: WebhookCreateInput!) { webhookCreate(input: $input) { success webhook { ${WEBHOOK_FIELDS} } } }`,
        {
          input: {
            id,
            url: settings.webhookUrl,
            label: 'Mesh',
            resourceTypes: RESOURCE_TYPES,
            allPublicTeams: true,
          },
        },
      );
    }
    return { kind: 'success', state: { webhook_id: id } };
  } catch (error) {
    return outcomeOf('registering the webhook', settings, error);
  }
}

/** Deletes a webhook; one Linear no longer has ("Entity not found") is gone already. */
async function deleteWebhook(request: Request, id: string): Promise<void> {
  try {
    await request(
      'mutation MeshWebhookDelete($id: String!) { webhookDelete(id: $id) { success } }',
      {
        id,
      },
    );
  } catch (error) {
    if (linearFailure(error)?.type !== 'InvalidInput') throw error;
  }
}

/** on_disable: removes the install's webhook; one already gone is removed. */
export async function removeWebhook(ctx: HookContext): Promise<HookOutcome> {
  const id = keptWebhook(ctx);
  if (id === undefined) return { kind: 'success', state: {} };
  const open = await opened(ctx);
  if ('outcome' in open) return open.outcome;
  try {
    await deleteWebhook(open.request, id);
  } catch (error) {
    return outcomeOf('removing the webhook', open.settings, error);
  }
  return { kind: 'success', state: {} };
}

/** health_check: the key still works, and the install's webhook is still there and enabled. */
export async function checkWebhook(ctx: HookContext): Promise<HookOutcome> {
  const open = await opened(ctx);
  if ('outcome' in open) return open.outcome;
  const { settings, request } = open;
  const id = keptWebhook(ctx);
  try {
    if (id === undefined) {
      await request('query MeshViewer { viewer { id } }', {});
      return { kind: 'success' };
    }
    const hook = await readWebhook(request, id);
    if (!hook)
      return { kind: 'terminal', reason: 'the webhook Mesh registered is gone from Linear' };
    if (!hook.enabled)
      return { kind: 'terminal', reason: 'the webhook Mesh registered is disabled in Linear' };
    return { kind: 'success' };
  } catch (error) {
    return outcomeOf('the health check', settings, error);
  }
}

/** on_secret_capture: the new key is tried against Linear before Mesh uses it. */
export async function verifyKey(ctx: HookContext): Promise<HookOutcome> {
  const open = await opened(ctx);
  if ('outcome' in open) return open.outcome;
  try {
    await open.request('query MeshViewer { viewer { id } }', {});
    return { kind: 'success' };
  } catch (error) {
    return outcomeOf('trying the captured key', open.settings, error);
  }
}
