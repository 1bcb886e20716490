import { describe, expect, it } from 'vitest';
import { TurnSlots, turnConcurrency } from './turn-slots.ts';

describe('turn slots', () => {
  it('runs at most the limit at once, in arrival order, and passes a slot on when one ends', async () => {
    const slots = new TurnSlots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const gates = Array.from({ length: 5 }, () => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    const done = gates.map((gate, i) =>
      slots.run(async () => {
        running++;
        most = Math.max(most, running);
        order.push(i);
        await gate.promise;
        running--;
      }),
    );
    await Promise.resolve();
    expect(order).toEqual([0, 1]);
    expect(slots.waiting).toBe(3);
    gates[1]?.resolve();
    await done[1];
    await Promise.resolve();
    expect(order).toEqual([0, 1, 2]);
    for (const gate of gates) gate.resolve();
    await Promise.all(done);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(slots.waiting).toBe(0);
  });

  it('frees the slot of a turn that throws', async () => {
    const slots = new TurnSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(() => Promise.resolve('next'))).toBe('next');
  });

  it('reads MESH_TURN_CONCURRENCY, refusing what is not a whole number in range', () => {
    expect(turnConcurrency({})).toBe(32);
    expect(turnConcurrency({ MESH_TURN_CONCURRENCY: '8' })).toBe(8);
    for (const bad of ['0', '-1', '1.5', 'many', '10001'])
      expect(() => turnConcurrency({ MESH_TURN_CONCURRENCY: bad })).toThrow(
        'MESH_TURN_CONCURRENCY must be a whole number from 1 to 10000',
      );
  });
});
