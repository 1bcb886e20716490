import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signatureFor, folderFiles, zipFiles } from '../../src/manifest/archive/archive-pack.ts';
import { freshMeshHome, meshIn, removeMeshHome } from '../support/cli.ts';

/*
 * Issue 20's `mesh packages verify` line, run as an operator would with the real binary: a
 * publisher makes a key and packs a package folder; the operator trusts the key and verifies,
 * then stages it. A one-byte change, an unknown key and an unsupported mesh_api are each refused
 * with a typed reason and exit 1.
 */
describe('mesh packages keygen, pack, verify and stage', () => {
  const home = freshMeshHome('mesh-archive-');
  const mesh = meshIn(home);
  const at = (name: string) => join(home, name);
  afterAll(() => removeMeshHome(home));

  it('accepts a correctly signed archive, and refuses a one-byte change, an unknown key and an unsupported mesh_api', async () => {
    expect((await mesh('packages', 'keygen', at('acme'))).code).toBe(0);
    expect((await mesh('packages', 'keygen', at('other'))).code).toBe(0);
    mkdirSync(at('trusted-keys'));
    cpSync(at('acme.pub'), at('trusted-keys/acme.pub'));

    const packed = await mesh(
      'packages',
      'pack',
      'tools/memory',
      '--key',
      at('acme.key'),
      '--out',
      at('memory.zip'),
    );
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(
      /^Packed mesh\.memory 1\.0\.0 into .*memory\.zip \(digest [0-9a-f]{64}\)/,
    );
    // One digest: the archive of a folder names the same code a run step of its tools pins.
    const shown = await mesh('tools', 'show', 'remember', '--json');
    const pin = (JSON.parse(shown.stdout) as { package: { digest: string } }).package.digest;
    expect(packed.stdout).toContain(`(digest ${pin})`);

    const verified = await mesh('packages', 'verify', at('memory.zip'));
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.stdout).toMatch(
      /^Verified mesh\.memory 1\.0\.0 \(mesh_api \^1\.0\): 4 files, digest [0-9a-f]{64}, signed by acme\./,
    );

    // One byte changed, anywhere in a stored file's data.
    const bytes = readFileSync(at('memory.zip'));
    bytes[60] = (bytes[60] ?? 0) ^ 0x01;
    writeFileSync(at('changed.zip'), bytes);
    const changed = await mesh('packages', 'verify', at('changed.zip'));
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(
      /^mesh packages verify: refused \((digest_mismatch|archive_unreadable)\): /,
    );

    // Signed by a key the operator does not trust (unless named with --trust).
    expect(
      (
        await mesh(
          'packages',
          'pack',
          'tools/memory',
          '--key',
          at('other.key'),
          '--out',
          at('other.zip'),
        )
      ).code,
    ).toBe(0);
    const unknown = await mesh('packages', 'verify', at('other.zip'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^mesh packages verify: refused \(unknown_key\): it is signed with key [0-9a-f]{16}, which is not among the trusted keys/,
    );
    expect(
      (await mesh('packages', 'verify', at('other.zip'), '--trust', at('other.pub'))).code,
    ).toBe(0);

    // A package for a Mesh API this one does not implement: pack refuses it, and so does verify.
    cpSync('tools/memory', at('future'), { recursive: true });
    const manifest = readFileSync(at('future/manifest.toml'), 'utf8').replace(
      'mesh_api = "^1.0"',
      'mesh_api = "^2.0"',
    );
    writeFileSync(at('future/manifest.toml'), manifest);
    const refusedPack = await mesh(
      'packages',
      'pack',
      at('future'),
      '--key',
      at('acme.key'),
      '--out',
      at('future.zip'),
    );
    expect(refusedPack.code).toBe(1);
    expect(refusedPack.stderr).toMatch(/refused \(unsupported_mesh_api\)/);
    const files = folderFiles(at('future'));
    const key = createPrivateKey(readFileSync(at('acme.key'), 'utf8'));
    writeFileSync(
      at('future.zip'),
      await zipFiles(new Map([...files, ['MESH-SIGNATURE.json', signatureFor(files, key)]])),
    );
    const future = await mesh('packages', 'verify', at('future.zip'));
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(
      /^mesh packages verify: refused \(unsupported_mesh_api\): manifest\.toml: /,
    );

    // Staged: the metadata, in the home.
    const staged = await mesh('packages', 'stage', at('memory.zip'));
    expect(staged.code).toBe(0);
    expect(staged.stdout).toContain('Staged mesh.memory 1.0.0 at');
    expect(readdirSync(at('packages/mesh.memory')).sort()).toEqual([
      '.mesh-staged.json',
      'SKILL.md',
      'manifest.toml',
    ]);
    const refusedStage = await mesh('packages', 'stage', at('changed.zip'));
    expect(refusedStage.code).toBe(1);
    expect(readdirSync(at('packages'))).toEqual(['mesh.memory']);
    // Nothing printed carries the private key.
    const pem = readFileSync(at('acme.key'), 'utf8').split('\n')[1] ?? 'none';
    for (const r of [packed, verified, changed, unknown, future, staged])
      expect(r.stdout + r.stderr).not.toContain(pem);
  }, 60_000);
});
