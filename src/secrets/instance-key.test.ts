import { createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { InstanceKey, instanceKeyId } from './instance-key.ts';

describe('the instance key in memory', () => {
  it('is identified by the first 8 bytes of its sha256, in hex', () => {
    const bytes = randomBytes(32);
    const expected = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
    expect(new InstanceKey(bytes).id).toBe(expected);
    expect(instanceKeyId(bytes)).toBe(expected);
  });

  it('shows only its id when serialized or inspected', () => {
    const bytes = randomBytes(32);
    const key = new InstanceKey(bytes);
    const shown = [JSON.stringify(key), inspect(key, { showHidden: true, depth: 5 }), String(key)];
    for (const text of shown) {
      expect(text).not.toContain(bytes.toString('hex'));
      expect(text).not.toContain(bytes.toString('base64'));
    }
    expect(JSON.parse(JSON.stringify(key))).toEqual({ instanceKeyId: key.id });
    expect(String(key)).toBe(`InstanceKey ${key.id}`);
    expect(Object.keys(key)).toEqual(['id']);
  });

  it('keeps its own copy of the bytes it was built from', () => {
    const bytes = randomBytes(32);
    const key = new InstanceKey(bytes);
    const wrapped = key.wrap(randomBytes(32), Buffer.from('aad'));
    bytes.fill(0);
    expect(key.unwrap(wrapped.nonce, wrapped.sealed, Buffer.from('aad'))).toBeDefined();
  });

  it('refuses key material that is not 32 bytes', () => {
    for (const size of [0, 16, 31, 33, 64]) {
      expect(() => new InstanceKey(randomBytes(size))).toThrow(RangeError);
    }
  });
});
