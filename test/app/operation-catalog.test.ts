import { describe, expect, it } from 'vitest';
import { cliGroups, operations } from '../../src/app/operations/catalog.ts';
import { commands } from '../../src/cli/commands.ts';
import { cliFace } from '../../src/cli/operation-command.ts';
import { apiRoutes } from '../../src/server/api.ts';
import { openApiDocument } from '../../src/server/openapi.ts';
import { uiRoutes } from '../../src/server/ui/routes.ts';

/*
 * The catalog walked face by face: every operation is served by a route, described in the
 * OpenAPI document, offered as a CLI subcommand whose help the declaration wrote — or says
 * why it is not on the command line — and every form of the web UI names the one it performs.
 */
describe('the operation catalog', () => {
  const document = openApiDocument(apiRoutes, { title: 'mesh', version: 'test' }) as {
    paths: Record<string, Record<string, { operationId: string; parameters?: { name: string }[] }>>;
  };

  it('serves every JSON route from the catalog: the few beside it answer no operation', () => {
    const fromCatalog = new Set(operations.map((op) => `${op.http.method} ${op.http.path}`));
    const beside = apiRoutes
      .map((r) => `${r.method} ${r.path}`)
      .filter((key) => !fromCatalog.has(key));
    // Each with why it is not an operation: it is the document, or it answers no JSON body.
    expect(Object.fromEntries(beside.map((key) => [key, true]))).toEqual({
      'GET /api/openapi.json': true, // the API's own description, generated from the rest
      'GET /api/metrics': true, // Prometheus text for a scraper
      'GET /api/conversations/{conversation}/events': true, // a server-sent event stream
      'GET /api/runs/{run}/events': true, // a server-sent event stream
      'GET /api/runs/{run}/artifacts/{artifact}/content': true, // an artifact's raw bytes
    });
  });

  it('is what every form of the web UI performs: each post names an operation of the catalog', () => {
    const names = new Set(operations.map((op) => op.name));
    const posts = uiRoutes.filter((r) => r.method === 'POST');
    const unnamed = posts
      .filter((r) => !('operation' in r) || !names.has(String(r.operation)))
      .map((r) => r.path);
    // Each with why it is no form: a person's input relayed to a handed-over browser page.
    expect(unnamed).toEqual(['/browser-sessions/{session}/input']);
    expect(posts.length).toBeGreaterThan(30);
  });

  it("groups the command line: each operation's group is declared, each group has operations", () => {
    const declared = cliGroups.map((g) => g.name);
    const used = new Set(operations.map((op) => cliFace(op)?.command[0]).filter(Boolean));
    expect([...used].filter((g) => !declared.includes(String(g)))).toEqual([]);
    expect(declared.filter((g) => !used.has(g))).toEqual([]);
    // The command line lists every group, with the catalog's summary.
    for (const group of cliGroups)
      expect(commands.find((c) => c.name === group.name)?.summary).toBe(group.summary);
  });

  it('declares each operation once, under a unique name', () => {
    const names = operations.map((op) => op.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThan(0);
  });

  for (const op of operations) {
    describe(op.name, () => {
      it('is served at its path, and described in the API document', () => {
        const served = apiRoutes.find(
          (r) => r.method === op.http.method && r.path === op.http.path,
        );
        expect(served, `${op.http.method} ${op.http.path}`).toBeDefined();
        const entry = document.paths[op.http.path]?.[op.http.method.toLowerCase()];
        expect(entry?.operationId).toBe(served?.operationId);
        if (op.http.method === 'GET') {
          const params = (entry?.parameters ?? []).map((p) => p.name).sort();
          expect(params).toEqual(Object.keys(op.input.properties).sort());
        }
      });

      it('is a CLI subcommand whose usage lists every field, or says why it is not', async () => {
        const cli = cliFace(op);
        if (!cli) {
          expect('notOnCli' in op.cli && op.cli.notOnCli.length > 10).toBe(true);
          return;
        }
        const command = commands.find((c) => c.name === cli.command[0]);
        expect(command, cli.command[0]).toBeDefined();
        expect(command?.usage).toContain(`mesh ${cli.command.join(' ')}`);
        for (const field of Object.keys(op.input.properties)) {
          const said = cli.positionals?.includes(field)
            ? field.toUpperCase()
            : `--${cli.files?.[field] ?? cli.flags?.[field] ?? field.replaceAll('_', '-')}`;
          expect(command?.usage, `${op.name}: ${field}`).toContain(said);
        }
        // The group dispatches the verb (an unknown verb would be a usage error, exit 2).
        const body = await command?.load();
        expect(body).toBeTypeOf('function');
      });
    });
  }
});
