import { describe, expect, it } from 'vitest';
import { keptFields } from './ui-route.ts';

describe('keptFields', () => {
  it("keeps a refused form's fields, never a secret's, a stray key's or more than fits", () => {
    const form = new URLSearchParams({
      name: 'ada',
      persona: 'careful',
      api_key: 'sk-live-0123',
      token: 'mesh_op_x',
      value: 'a secret value',
      csrf: 'c',
      'Weird Key': 'x',
      long: 'y'.repeat(5000),
    });
    expect(keptFields(form)).toEqual({ name: 'ada', persona: 'careful' });
  });
});
