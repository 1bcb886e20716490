import { describe, expect, it } from 'vitest';
import { backendClients } from './rented.ts';

interface Row {
  readonly id: string;
  readonly settings: { readonly region?: string };
}

/** A family's clients with a key version the test moves, counting the clients built. */
function clients() {
  let version: number | undefined = 1;
  const built: string[] = [];
  const family = backendClients(
    (row: Row) => {
      built.push(`${row.id}@${String(version)}`);
      return Promise.resolve({ row, key: version });
    },
    () => Promise.resolve(version),
  );
  return {
    family,
    built,
    rotate: (to: number | undefined) => {
      version = to;
    },
  };
}

describe("a family's backend clients", () => {
  const row: Row = { id: 'b1', settings: { region: 'eu' } };

  it('keep one client per backend while its row and key stay as they are', async () => {
    const { family, built } = clients();
    const first = await family.of(row);
    expect(await family.of({ ...row })).toBe(first);
    expect(built).toEqual(['b1@1']);
  });

  it('build a new client once the key is replaced, so the next rental uses the new key', async () => {
    const { family, built, rotate } = clients();
    const before = await family.of(row);
    rotate(2);
    const after = await family.of(row);
    expect(after).not.toBe(before);
    expect(after.key).toBe(2);
    // A key retired (no version) is a change too: the client says so when it is built.
    rotate(undefined);
    expect((await family.of(row)).key).toBeUndefined();
    expect(built).toEqual(['b1@1', 'b1@2', 'b1@undefined']);
  });

  it('build a new client for changed settings, and again after a build failed', async () => {
    let fail = true;
    const family = backendClients(
      (r: Row) => (fail ? Promise.reject(new Error('vendor down')) : Promise.resolve(r)),
      () => Promise.resolve(1),
    );
    await expect(family.of(row)).rejects.toThrow('vendor down');
    fail = false;
    expect(await family.of(row)).toBe(row);
    const moved = { id: 'b1', settings: { region: 'us' } };
    expect(await family.of(moved)).toBe(moved);
  });
});
