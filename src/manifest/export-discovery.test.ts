import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { exportsOf, loadExportDiscovery } from './export-discovery.ts';

const discover = (text: string) => exportsOf(ts, text, 'handlers.ts');

describe('exportsOf', () => {
  it('lists named value exports of every form, sorted', () => {
    const found = discover(`
      import { helper } from './helper.ts';
      import type { ToolHandler } from '../../src/tool/definition.ts';
      export async function search() {}
      export const fetch: ToolHandler = async () => ({ text: '' }), fetchMany = fetch;
      export const { a, b: renamed } = { a: 1, b: 2 };
      function local() {}
      export { local as aliased, helper };
      export { reexported } from './other.ts';
      export class Thing {}
      export function overloaded(x: string): void;
      export function overloaded(x: unknown) {}
    `);
    expect(found.problems).toEqual([]);
    expect(found.names).toEqual([
      'Thing',
      'a',
      'aliased',
      'fetch',
      'fetchMany',
      'helper',
      'overloaded',
      'reexported',
      'renamed',
      'search',
    ]);
  });

  it('leaves type-only exports out', () => {
    const found = discover(`
      export interface Options { x: number }
      export type Handler = () => void;
      interface Local {}
      export type { Local };
      export { type Other } from './other.ts';
      export type { Third } from './third.ts';
      export const real = 1;
    `);
    expect(found).toEqual({ names: ['real'], problems: [] });
  });

  it('reports what cannot be bound by name', () => {
    const found = discover(`
      export * from './impl.ts';
      export * as ns from './impl.ts';
      export default function () {}
      export let swappable = () => {};
      const x = 1;
      export { x as default };
    `);
    expect(found.names).toEqual([]);
    expect(found.problems).toHaveLength(5);
    expect(found.problems.join('\n')).toMatch(/export \*/);
    expect(found.problems.join('\n')).toMatch(/default export/);
    expect(found.problems.join('\n')).toMatch(/swappable could be reassigned/);
  });

  it('does not execute the module', () => {
    const found = discover(`throw new Error('executed'); export const ok = 1;`);
    expect(found.names).toEqual(['ok']);
  });

  it('is loaded lazily', async () => {
    const load = await loadExportDiscovery();
    expect(load?.('export const x = 1;', 'm.ts').names).toEqual(['x']);
  });
});
