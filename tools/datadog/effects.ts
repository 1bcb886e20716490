import type * as V1 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v1/index.js';
import type * as V2 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v2/index.js';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import {
  deliveryOutput,
  OUTBOX,
  type EffectKey,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import { datadogFailure, deliveryError, failureText } from './datadog-client.ts';
import { refused } from '../../src/tool/package-support.ts';
import { openCall as open } from './open-call.ts';

/* The package's effects: an event posted, a monitor muted, each keyed and looked up by its key. */

/** How far back a lookup searches the event stream for our key. */
const EVENT_LOOKBACK_S = 24 * 3600;
/** Pages of current downtimes a lookup reads (100 each) before it gives up. */
const DOWNTIME_PAGES = 10;

function meshTag(key: EffectKey): string {
  return `mesh_key:${key.key.slice(0, 16)}`;
}

/** A stored receipt field as text (receipts are JSON the package wrote itself). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

function eventReceipt(event: V1.Event): EffectReceipt {
  return {
    externalId: event.idStr ?? String(event.id ?? ''),
    ...(event.url === undefined ? {} : { link: event.url }),
    data: { title: event.title ?? null },
  };
}

/**
 * Posts an event. Datadog takes no idempotency key, so the event carries ours as a tag, and the
 * lookup searches the last day's event stream for it: found → delivered. Not found is not proof
 * (the stream is searchable only once Datadog has processed the event), so the lookup then says
 * it cannot tell, and the machinery reports the effect unknown rather than posting it again.
 */
export async function postDatadogEvent(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const tags = Array.isArray(args['tags']) ? (args['tags'] as string[]) : [];
  if (tags.some((t) => t.toLowerCase().startsWith('mesh_key:')))
    return refused(
      'post_datadog_event: `tags` may not hold a mesh_key: tag; Mesh adds its own to find the event again.',
    );
  const opened = await open(ctx, 'post_datadog_event');
  if (!opened.ok) return opened.out;
  const { settings, client } = opened;
  const title = args['title'] as string;
  const text = args['text'] as string;
  // The schema admits only info, success, warning and error.
  const alertType = typeof args['alert_type'] === 'string' ? args['alert_type'] : 'info';
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'event',
    kind: 'datadog.event_create',
    target: `event stream (${settings.site})`,
    payload: { title, text, tags, alert_type: alertType },
    async send(key) {
      const { events } = await client.v1();
      try {
        const answer = await events.createEvent({
          body: {
            title,
            text,
            tags: [...tags, meshTag(key)],
            alertType: alertType as V1.EventAlertType,
          },
        });
        if (!answer.event) throw new Error('Datadog answered without the event');
        return eventReceipt(answer.event);
      } catch (error) {
        throw deliveryError('posting the event', settings, client, error);
      }
    },
    async lookup(key) {
      const { events } = await client.v1();
      const tag = meshTag(key);
      const nowS = Math.floor(Date.now() / 1000);
      const answer = await events.listEvents({
        start: nowS - EVENT_LOOKBACK_S,
        end: nowS + 300,
        tags: tag,
      });
      const event = (answer.events ?? []).find((e) => (e.tags ?? []).includes(tag));
      if (!event) throw new Error(`no event tagged ${tag} in the event stream yet`);
      return eventReceipt(event);
    },
  });
  return deliveryOutput('posting the Datadog event', delivery, (receipt) => ({
    text: `Posted Datadog event ${receipt.externalId} "${textOf(receipt.data?.['title'])}": ${receipt.link ?? ''}`,
    data: { id: receipt.externalId, url: receipt.link ?? null },
  }));
}

/** The monitor a downtime is scoped to, when it is scoped to one by id. */
function downtimeMonitor(downtime: V2.DowntimeResponseData): number | undefined {
  const identifier = downtime.attributes?.monitorIdentifier as { monitorId?: unknown } | undefined;
  return typeof identifier?.monitorId === 'number' ? identifier.monitorId : undefined;
}

function downtimeEnd(downtime: V2.DowntimeResponseData): string | null {
  const end = (downtime.attributes?.schedule as { end?: unknown } | undefined)?.end;
  return end instanceof Date ? end.toISOString() : null;
}

/**
 * Mutes a monitor with a v2 downtime scoped to it (the v1 mute endpoints are deprecated), ending
 * after the given minutes. Datadog takes no idempotency key, so the downtime's message carries
 * ours; the lookup reads the current downtimes for one on this monitor with our key: found →
 * delivered, not found → sent again (a second downtime of the same scope and end is harmless).
 */
export async function muteDatadogMonitor(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'mute_datadog_monitor');
  if (!opened.ok) return opened.out;
  const { settings, client } = opened;
  const monitorId = args['monitor_id'] as number;
  const minutes = args['duration_minutes'] as number;
  const scope = typeof args['scope'] === 'string' ? args['scope'].trim() || '*' : '*';
  const reason = typeof args['message'] === 'string' ? args['message'].trim() : '';
  let monitor: V1.Monitor;
  try {
    monitor = await (await client.v1()).monitors.getMonitor({ monitorId });
  } catch (error) {
    if (datadogFailure(error)?.status === 404)
      return refused(`Datadog has no monitor ${monitorId} that this agent's account can see.`);
    return refused(failureText(`reading monitor ${monitorId}`, settings, error));
  }
  const monitorName = monitor.name ?? `monitor ${monitorId}`;
  const link = `${settings.appUrl}/monitors/${monitorId}`;
  const receipt = (downtime: V2.DowntimeResponseData): EffectReceipt => ({
    externalId: downtime.id ?? '',
    link,
    data: {
      monitor_id: monitorId,
      monitor: monitorName,
      scope: downtime.attributes?.scope ?? scope,
      ends: downtimeEnd(downtime),
    },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'downtime',
    kind: 'datadog.monitor_mute',
    target: `monitor ${monitorId}`,
    payload: { monitor_id: monitorId, scope, duration_minutes: minutes, message: reason },
    async send(key) {
      const { downtimes } = await client.v2();
      try {
        const answer = await downtimes.createDowntime({
          body: {
            data: {
              type: 'downtime',
              attributes: {
                monitorIdentifier: { monitorId },
                scope,
                message: reason === '' ? meshTag(key) : `${reason}\n\n${meshTag(key)}`,
                schedule: { end: new Date(Date.now() + minutes * 60_000) },
              },
            },
          },
        });
        if (!answer.data) throw new Error('Datadog answered without the downtime');
        return receipt(answer.data);
      } catch (error) {
        throw deliveryError(`muting monitor ${monitorId}`, settings, client, error);
      }
    },
    async lookup(key) {
      const { downtimes } = await client.v2();
      const tag = meshTag(key);
      for (let page = 0; page < DOWNTIME_PAGES; page++) {
        const answer = await downtimes.listDowntimes({
          currentOnly: true,
          pageOffset: page * 100,
          pageLimit: 100,
        });
        const data = answer.data ?? [];
        const ours = data.find(
          (d) => downtimeMonitor(d) === monitorId && (d.attributes?.message ?? '').includes(tag),
        );
        if (ours) return receipt(ours);
        if (data.length < 100) return undefined;
      }
      throw new Error('too many current downtimes to search for ours');
    },
  });
  return deliveryOutput(`muting monitor ${monitorId}`, delivery, (r) => ({
    text:
      `Muted monitor ${monitorId} (${textOf(r.data?.['monitor'])}) for scope ${textOf(r.data?.['scope'])} ` +
      `until ${textOf(r.data?.['ends'])} (downtime ${r.externalId}): ${r.link ?? ''}`,
    data: { downtime_id: r.externalId, url: r.link ?? null, ...r.data },
  }));
}
