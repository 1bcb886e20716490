import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GH_PIN, ghProbeCommand, ghVerdict, type GhPin } from '../../tools/github/gh-pin.ts';

const pin: GhPin = {
  version: '2.23.0',
  debian: '2.23.0+dfsg1-1',
  path: '/usr/bin/gh',
  sha256: { x86_64: 'a'.repeat(64) },
};
const probe = (stdout: string, exitCode: number | null = 0) => ghVerdict(pin, { exitCode, stdout });

describe('the pinned GitHub CLI', () => {
  it('is offered only when the binary at the pinned path has the pinned checksum', () => {
    expect(probe(`x86_64\n${'a'.repeat(64)}  /usr/bin/gh\n`)).toEqual({
      ok: true,
      path: '/usr/bin/gh',
      version: '2.23.0',
    });
  });

  it('is not offered, with why, when it is missing, another build, on another machine, or unprobed', () => {
    expect(probe('x86_64\n')).toEqual({
      ok: false,
      why: 'gh 2.23.0 is not installed at /usr/bin/gh',
    });
    expect(probe(`x86_64\n${'b'.repeat(64)}  /usr/bin/gh\n`)).toEqual({
      ok: false,
      why: 'the gh at /usr/bin/gh is not the pinned 2.23.0 build',
    });
    // What the workspace printed is not echoed: an architecture Mesh has no pin for is named as such.
    expect(probe(`aarch64; rm -rf /\n${'a'.repeat(64)}  /usr/bin/gh\n`)).toEqual({
      ok: false,
      why: "no gh build is pinned for this workspace's architecture",
    });
    expect(probe('', 127)).toMatchObject({ ok: false });
    expect(probe('', null)).toMatchObject({ ok: false });
    expect(probe('constructor\n')).toMatchObject({ ok: false });
  });

  it('probes with a command that quotes the path', () => {
    expect(ghProbeCommand({ ...pin, path: "/opt/it's/gh" })).toBe(
      `uname -m; if [ -f '/opt/it'\\''s/gh' ]; then sha256sum '/opt/it'\\''s/gh'; fi`,
    );
  });

  it('pins Debian bookworm’s gh by version and by the binary’s sha256', () => {
    expect(GH_PIN.debian.startsWith(`${GH_PIN.version}+`)).toBe(true);
    for (const hex of Object.values(GH_PIN.sha256)) expect(hex).toMatch(/^[0-9a-f]{64}$/);
    // npm test installs the same Debian version the pin names.
    const script = readFileSync('scripts/system-packages.mjs', 'utf8');
    expect(script).toContain(`const GH_DEBIAN = '${GH_PIN.debian}';`);
  });
});
