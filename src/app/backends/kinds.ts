import type { RentedKinds } from './rented-kinds.ts';

/*
 * The kinds of the rented-backend families, and the settings each kind takes: the one place a
 * kind or a setting is added (its client is built in workspace-backends.ts or browser-backends.ts,
 * and the database's check lists the kinds too). Pure data: the CLI's help reads it.
 */

/** The kinds of workspace backend, and the settings each takes. */
export const WORKSPACE_KINDS: RentedKinds = {
  noun: 'workspace backend',
  kinds: [
    { name: 'local', label: 'local (bubblewrap)', keyed: false, developmentOnly: true },
    { name: 'e2b', label: 'e2b', keyed: true, developmentOnly: false },
  ],
  settings: [
    {
      field: 'api_url',
      description: "e2b: the control plane's URL (E2B's own unless given)",
      maxLength: 2000,
      kinds: ['e2b'],
      format: 'url',
    },
    {
      field: 'sandbox_url',
      description: "e2b: the sandboxes' URL, for a self-hosted or loopback deployment",
      maxLength: 2000,
      kinds: ['e2b'],
      format: 'url',
    },
    {
      field: 'template',
      description: 'e2b: the sandbox template, by name or id',
      maxLength: 128,
      kinds: ['e2b'],
      format: { pattern: /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, what: 'a template name or id' },
    },
  ],
};

/** The kinds of browser backend, and the settings each takes. */
export const BROWSER_KINDS: RentedKinds = {
  noun: 'browser backend',
  kinds: [
    {
      name: 'local',
      label: 'local (Chromium on this machine)',
      keyed: false,
      developmentOnly: true,
    },
    { name: 'cloudflare', label: 'cloudflare (Browser Run)', keyed: true, developmentOnly: false },
    { name: 'browserbase', label: 'browserbase', keyed: true, developmentOnly: false },
    { name: 'steel', label: 'steel', keyed: true, developmentOnly: false },
  ],
  settings: [
    {
      field: 'base_url',
      description:
        "a vendor's API root, when not its own (a gateway; a loopback fake on a `development` backend)",
      maxLength: 2000,
      kinds: ['cloudflare', 'browserbase', 'steel'],
      format: 'url',
    },
    {
      field: 'account_id',
      description: 'cloudflare: the account whose Browser Run is used',
      maxLength: 64,
      kinds: ['cloudflare'],
      requiredBy: ['cloudflare'],
      format: { pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, what: 'an account id' },
    },
    {
      field: 'project_id',
      description: 'browserbase: the project sessions are billed to',
      maxLength: 128,
      kinds: ['browserbase'],
      format: { pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, what: 'a project id' },
    },
  ],
};
