import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../manifest/verify-catalog.ts';
import { trackerCatalog } from '../../test/support/catalog.ts';
import { hasCode } from '../tool/errors.ts';
import {
  ConfigValueError,
  effectiveConfig,
  renderPublicSettings,
  validateConfigValue,
} from './config-values.ts';

const packages = loadCatalog(trackerCatalog()).packages;
const tracker = packages[0];

function refusal(key: string, value: unknown): ConfigValueError {
  try {
    validateConfigValue(packages, 'example.tracker', key, value);
  } catch (error) {
    expect(hasCode(error, ConfigValueError.code)).toBe(true);
    return error as ConfigValueError;
  }
  throw new Error('expected a refusal');
}

describe('config values', () => {
  it('accepts a value of the declared type', () => {
    expect(validateConfigValue(packages, 'example.tracker', 'page_size', 50).value).toBe(50);
    expect(validateConfigValue(packages, 'example.tracker', 'default_project', 'OPS').value).toBe(
      'OPS',
    );
  });

  it('refuses an unknown key, a secret key sent as config, and a wrong type, naming the key and never the value', () => {
    const unknown = refusal('colour', 'canary-value-1');
    expect(unknown.message).toContain('no config key "colour"');
    expect(unknown.message).toContain('default_project, page_size');
    const secret = refusal('api_token', 'canary-value-2');
    expect(secret.message).toContain('api_token is a secret');
    const wrong = refusal('page_size', 'canary-value-3');
    expect(wrong.message).toBe('page_size must be an integer, not a string');
    for (const e of [unknown, secret, wrong])
      expect(JSON.stringify(e) + e.message).not.toMatch(/canary-value/);
    expect(refusal('page_size', 2.5).message).toContain('not a number');
  });

  it('fills defaults, and renders only public values as the agent’s settings', () => {
    if (!tracker) throw new Error('no tracker fixture');
    const values = effectiveConfig(tracker, new Map([['page_size', 5]]));
    expect(values).toEqual({ default_project: 'MESH', page_size: 5 });
    const text = renderPublicSettings(packages, () => values, new Set(['example.tracker']));
    expect(text).toContain('default_project: "MESH"');
    expect(text).not.toContain('page_size');
    expect(renderPublicSettings(packages, () => values, new Set())).toBe('');
  });
});
