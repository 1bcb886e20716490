import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURE_PACKAGES, temporaryDir } from '../../test/support/catalog.ts';
import { UsageError } from './command.ts';
import { toolsValidate } from './tools-validate.ts';
import { commands } from './commands.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

describe('mesh tools validate', () => {
  it('prints a summary and exits 0 for valid packages', async () => {
    const c = capture();
    expect(await toolsValidate([FIXTURE_PACKAGES], c.io)).toBe(0);
    expect(c.out.join('\n')).toMatch(
      /^ok: 1 package, 3 tools, 4 hooks, 1 skill in .*; handler and hook bindings match$/,
    );
    expect(c.err).toEqual([]);
  });

  it('prints one problem per line as file: field: message and exits 1', async () => {
    const { dir, remove } = temporaryDir('cli');
    try {
      cpSync(FIXTURE_PACKAGES, dir, { recursive: true });
      const manifest = join(dir, 'tracker', 'manifest.toml');
      const { readFileSync } = await import('node:fs');
      writeFileSync(
        manifest,
        readFileSync(manifest, 'utf8')
          .replace('disposition = "public"', 'disposition = "visible"')
          .replace('handler = "getIssue"', 'handler = "readIssue"'),
      );
      const c = capture();
      expect(await toolsValidate([dir], c.io)).toBe(1);
      expect(c.out).toEqual([
        `${dir}/tracker/manifest.toml: config[1].disposition: must be one of secret, config, public (an unknown disposition fails closed)`,
      ]);
      expect(c.err.join('\n')).toContain('1 problem in');
      writeFileSync(
        manifest,
        readFileSync(manifest, 'utf8').replace('disposition = "visible"', 'disposition = "public"'),
      );
      const again = capture();
      expect(await toolsValidate([dir], again.io)).toBe(1);
      expect(again.out).toEqual([
        `${dir}/tracker/handlers.ts: getIssue: is exported as a handler but no [[tools]] entry of example.tracker names it (handlers.ts exports handlers only)`,
        `${dir}/tracker/manifest.toml: tools[1].handler: tool tracker_get_issue names handler readIssue, which ${dir}/tracker/handlers.ts does not export`,
      ]);
    } finally {
      remove();
    }
  });

  it("reports a handlers.ts nested too deeply to parse as its package's problem, and goes on", async () => {
    const { dir, remove } = temporaryDir('cli');
    try {
      cpSync(FIXTURE_PACKAGES, dir, { recursive: true });
      // Deep enough to overflow a recursive parser's stack, well under the 1 MiB source limit.
      const depth = 200_000;
      writeFileSync(
        join(dir, 'tracker', 'handlers.ts'),
        `export const x = ${'['.repeat(depth)}${']'.repeat(depth)};\n`,
      );
      cpSync(
        new URL('../../test/fixtures/broken-manifests/class-unknown', import.meta.url).pathname,
        join(dir, 'case'),
        { recursive: true },
      );
      const c = capture();
      expect(await toolsValidate([dir], c.io)).toBe(1);
      const out = c.out.join('\n');
      expect(out).toContain(`${dir}/tracker/handlers.ts: could not be parsed: it nests too deeply`);
      expect(out).toContain(`${dir}/case/manifest.toml: tools[0].class:`);
      expect(out).not.toMatch(/RangeError|at .*\.js:/);
    } finally {
      remove();
    }
  });

  it('refuses a directory that does not exist', async () => {
    const c = capture();
    expect(await toolsValidate(['/nonexistent/tools'], c.io)).toBe(1);
    expect(c.err.join('')).toContain('/nonexistent/tools is not a directory');
  });

  it('treats a missing or unknown subcommand, or two directories, as a usage error', async () => {
    const c = capture();
    const toolsCommand = await (commands.find((command) => command.name === 'tools')?.load() ??
      Promise.reject(new Error('no tools command')));
    await expect(toolsCommand([], c.io)).rejects.toThrow(UsageError);
    await expect(toolsCommand(['frobnicate'], c.io)).rejects.toThrow(
      /unknown subcommand "frobnicate"/,
    );
    await expect(toolsCommand(['validate', 'a', 'b'], c.io)).rejects.toThrow(
      /expected at most one directory/,
    );
  });
});
