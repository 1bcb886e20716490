import { shellQuote } from './checkout-commands.ts';

/**
 * The one GitHub CLI build the checkout offers the model: Debian bookworm's `gh` package, whose
 * binary's sha256 Mesh carries per machine architecture (decision 0052). The npm registry serves
 * no build of GitHub's CLI (its `gh` package is an unrelated tool), and the release tarballs are
 * not reachable from where workspaces run, so the local backend's image (the host's /usr, bound
 * read-only into the sandbox) carries Debian's build, installed at this exact version.
 */
export interface GhPin {
  /** gh's own version. */
  readonly version: string;
  /** The Debian package version it comes from (`apt-get install gh=<this>`). */
  readonly debian: string;
  /** Where the package puts the binary, and where the model is told to run it from. */
  readonly path: string;
  /** sha256 of the binary by `uname -m`; an architecture not listed has no pinned build. */
  readonly sha256: Readonly<Record<string, string>>;
}

export const GH_PIN: GhPin = Object.freeze({
  version: '2.23.0',
  debian: '2.23.0+dfsg1-1',
  path: '/usr/bin/gh',
  sha256: Object.freeze({
    x86_64: 'ccb3b6fc7719fbae9e027d11856dc1c73ee7503075b23e28a723ab5975c09dde',
  }),
});

/**
 * What the checkout runs in the workspace to find the pinned build: the machine's architecture on
 * the first line, then the binary's sha256 (sha256sum's line) when a file is at the pinned path.
 */
export function ghProbeCommand(pin: GhPin): string {
  const path = shellQuote(pin.path);
  return `uname -m; if [ -f ${path} ]; then sha256sum ${path}; fi`;
}

/** Whether the workspace holds the pinned build, or why the model is not offered gh. */
export type GhVerdict =
  | { readonly ok: true; readonly path: string; readonly version: string }
  | { readonly ok: false; readonly why: string };

/** Reads the probe's output against the pin. Anything unexpected is "not offered", with why. */
export function ghVerdict(
  pin: GhPin,
  probe: { exitCode: number | null; stdout: string },
): GhVerdict {
  if (probe.exitCode !== 0) return { ok: false, why: 'the workspace could not be probed for it' };
  const [arch = '', summed = ''] = probe.stdout.split('\n').map((l) => l.trim());
  const pinned = Object.hasOwn(pin.sha256, arch) ? pin.sha256[arch] : undefined;
  if (pinned === undefined)
    return { ok: false, why: `no gh build is pinned for this workspace's architecture` };
  if (summed === '') return { ok: false, why: `gh ${pin.version} is not installed at ${pin.path}` };
  const actual = summed.split(/\s+/)[0];
  if (actual !== pinned)
    return { ok: false, why: `the gh at ${pin.path} is not the pinned ${pin.version} build` };
  return { ok: true, path: pin.path, version: pin.version };
}
