import type { JsonValue } from '../../src/model/json.ts';
import { checkBaseUrl } from '../../src/tool/base-url.ts';
import type { SettingsOutcome as Outcome } from '../../src/tool/package-support.ts';

/** The secret kinds every tool of the package needs: the agent's own Datadog keys. */
export const API_KEY_KIND = 'datadog_api_key';
export const APP_KEY_KIND = 'datadog_application_key';

/** The agent's mesh.datadog settings, checked. */
export interface DatadogSettings {
  /** The API root requests go to (`https://api.<site>`, or the `api_url` override). */
  readonly apiUrl: string;
  /** The web app root links point at (`https://app.datadoghq.com`, `https://us3.datadoghq.com`). */
  readonly appUrl: string;
  readonly site: string;
}

export type SettingsOutcome = Outcome<DatadogSettings>;

const SITE = /^[a-z0-9]+(?:[.-][a-z0-9]+)*\.[a-z]{2,}$/;

/** Reads and checks the package's config values for one call; messages name settings, not values. */
export function datadogSettings(config: Readonly<Record<string, JsonValue>>): SettingsOutcome {
  const site = config['site'] ?? 'datadoghq.com';
  if (typeof site !== 'string' || !SITE.test(site))
    return {
      ok: false,
      problem:
        'the setting `site` is not a Datadog site name (such as datadoghq.com or datadoghq.eu)',
    };
  // The first site of a region (datadoghq.com, datadoghq.eu) serves its app at app.<site>; the
  // others (us3.datadoghq.com) at the site itself.
  const appUrl = site.split('.').length === 2 ? `https://app.${site}` : `https://${site}`;
  const override = config['api_url'];
  if (override === undefined || override === '')
    return { ok: true, settings: { apiUrl: `https://api.${site}`, appUrl, site } };
  const api = checkBaseUrl('api_url', override, config['allow_loopback_http'] === true);
  if (!api.ok) return api;
  return { ok: true, settings: { apiUrl: api.url, appUrl, site } };
}
