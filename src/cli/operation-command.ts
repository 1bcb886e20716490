import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { InputSchema } from '../app/operations/input.ts';
import { fieldFromText, type AnyOperation, type CliFace } from '../app/operations/operation.ts';
import type { JsonSchema } from '../model/json.ts';
import { isMeshError, MeshError } from '../tool/errors.ts';
import { commandGroup, UsageError, type CommandBody, type Subcommand } from './command.ts';

/*
 * The CLI face of the operation catalog: each operation's subcommand and its help, generated from
 * its declaration. Positional arguments and `--flags` (an input field `image_input` is the flag
 * `--image-input`) are read into the input as the schema types them; the operation validates it,
 * in this process or in the server beside it, exactly as the HTTP API does. `--json` prints the
 * output as the API's body is.
 */

/** The flag a field is given with: its declared name, else the field in kebab case. */
function flagOf(field: string, cli?: CliFace<unknown>): string {
  return cli?.flags?.[field] ?? field.replaceAll('_', '-');
}

/** The CLI face of an operation that has one. */
export function cliFace(op: AnyOperation): CliFace<unknown> | undefined {
  return 'command' in op.cli ? (op.cli as CliFace<unknown>) : undefined;
}

/** What a flag's value is called in help: N for numbers, on|off, the choices, or the field. */
function placeholder(field: string, schema: JsonSchema): string {
  if (schema['type'] === 'integer' || schema['type'] === 'number') return 'N';
  if (schema['type'] === 'boolean') return 'on|off';
  const types = Array.isArray(schema['type']) ? (schema['type'] as unknown[]) : [schema['type']];
  if (types.includes('object')) return 'JSON';
  if (Array.isArray(schema['enum']) && schema['enum'].length <= 4) return schema['enum'].join('|');
  return field.toUpperCase();
}

/** Whether a field is a list, given on the command line as its flag once per item. */
function isList(schema: JsonSchema | undefined): boolean {
  return schema?.['type'] === 'array';
}

/**
 * The usage lines of an operation's subcommand: its synopsis, then a line per argument; then a
 * synopsis for each alias (the operation with some fields fixed).
 */
export function operationUsage(op: AnyOperation): string {
  const cli = cliFace(op);
  if (!cli) return '';
  const aliases = Object.entries(cli.aliases ?? {}).map(([verb, preset]) => {
    const fixed = Object.entries(preset)
      .map(
        ([k, v]) =>
          `--${flagOf(k, cli)} ${typeof v === 'boolean' ? (v ? 'on' : 'off') : String(v)}`,
      )
      .join(' ');
    return `  ${synopsisOf(op, cli, verb, Object.keys(preset))}\n      the same as mesh ${cli.command.join(' ')} ${fixed}`;
  });
  return [usageOf(op, cli), ...aliases].join('\n');
}

/** One verb's synopsis: the fields it reads, as arguments and flags. */
function synopsisOf(
  op: AnyOperation,
  cli: CliFace<unknown>,
  verb: string,
  preset: readonly string[],
): string {
  const { properties, required } = op.input;
  const positionals = (cli.positionals ?? []).filter((k) => !preset.includes(k));
  const files = cli.files ?? {};
  const flags = Object.keys(properties).filter(
    (k) => !positionals.includes(k) && !preset.includes(k),
  );
  return [
    `mesh ${cli.command[0]} ${verb}`,
    ...positionals.map((k) => {
      // A positional that is a choice reads as its choices (on|off), else as its name.
      const shown = properties[k]?.['type'] === 'boolean' ? 'on|off' : k.toUpperCase();
      return required.includes(k) ? shown : `[${shown}]`;
    }),
    ...flags.map((k) => {
      const flag = files[k]
        ? `--${files[k]} FILE`
        : cli.switches?.includes(k)
          ? `--${flagOf(k, cli)}`
          : isList(properties[k])
            ? `--${flagOf(k, cli)} ${placeholder(k, (properties[k]?.['items'] ?? {}) as JsonSchema)}`
            : `--${flagOf(k, cli)} ${placeholder(k, properties[k] ?? {})}`;
      const shown = required.includes(k) ? flag : `[${flag}]`;
      return isList(properties[k]) ? `${shown}...` : shown;
    }),
    ...(cli.confirm === undefined ? [] : ['--yes']),
    // A 204 answers nothing, so there is nothing to print as JSON.
    ...(op.http.status === 204 ? [] : ['[--json]']),
  ].join(' ');
}

/** The usage of an operation's own verb: its synopsis, its summary, a line per argument. */
function usageOf(op: AnyOperation, cli: CliFace<unknown>): string {
  const { properties } = op.input;
  const positionals = cli.positionals ?? [];
  const files = cli.files ?? {};
  const flags = Object.keys(properties).filter((k) => !positionals.includes(k));
  const synopsis = synopsisOf(op, cli, cli.command[1], []);
  const rows: [string, string][] = [
    ...positionals.map((k): [string, string] => [
      k.toUpperCase(),
      properties[k]?.description ?? '',
    ]),
    ...flags.map((k): [string, string] => [
      files[k] ? `--${files[k]} FILE` : `--${flagOf(k, cli)}`,
      files[k]
        ? `a file holding ${properties[k]?.description ?? k}`
        : (properties[k]?.description ?? ''),
    ]),
    ...(cli.confirm === undefined
      ? []
      : [['--yes', `confirms it: ${cli.confirm}`] as [string, string]]),
    ...(op.http.status === 204
      ? []
      : [['--json', 'print the result as the API answers it'] as [string, string]]),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    `  ${synopsis}`,
    `      ${op.summary}`,
    ...rows.map(([name, text]) => `      ${name.padEnd(width)}  ${text}`),
  ].join('\n');
}

/** A flag's or argument's text as the schema types the field (left as text when it does not read). */
function typed(text: string, schema: JsonSchema, name: string): unknown {
  const value = fieldFromText(text, schema, FLAG_BOOLEANS);
  if (value === undefined)
    throw new UsageError(
      `${name} takes ${schema['type'] === 'boolean' ? 'on or off' : 'a number'}`,
    );
  return value;
}

/** The words a flag says a boolean with. */
const FLAG_BOOLEANS = { on: true, true: true, off: false, false: false };

/** Reads the input of an operation from its subcommand's arguments. */
export function readInput(
  op: AnyOperation,
  args: readonly string[],
  preset: Readonly<Record<string, unknown>> = {},
): { input: Record<string, unknown>; json: boolean } {
  const cli = cliFace(op);
  if (!cli) throw new UsageError(`${op.name} is not on the command line`);
  const schema: InputSchema = op.input;
  const fields = Object.keys(schema.properties).filter((k) => !Object.hasOwn(preset, k));
  const positionals = (cli.positionals ?? []).filter((k) => fields.includes(k));
  const files = cli.files ?? {};
  const options: NonNullable<ParseArgsConfig['options']> = { json: { type: 'boolean' } };
  if (cli.confirm !== undefined) options['yes'] = { type: 'boolean' };
  for (const k of fields) {
    if (positionals.includes(k)) continue;
    options[files[k] ?? flagOf(k, cli)] = cli.switches?.includes(k)
      ? { type: 'boolean' }
      : isList(schema.properties[k])
        ? { type: 'string', multiple: true }
        : { type: 'string' };
  }
  const parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  if (cli.confirm !== undefined && parsed.values['yes'] !== true)
    throw new UsageError(`${cli.confirm}; pass --yes to do it`);
  const input: Record<string, unknown> = { ...preset };
  if (parsed.positionals.length > positionals.length)
    throw new UsageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[positionals.length]?.slice(0, 64))}`,
    );
  for (const [i, k] of positionals.entries()) {
    const text = parsed.positionals[i];
    if (text === undefined) {
      if (schema.required.includes(k)) throw new UsageError(`name the ${k}`);
      continue;
    }
    input[k] = typed(text, schema.properties[k] ?? {}, k.toUpperCase());
  }
  for (const k of fields) {
    if (positionals.includes(k)) continue;
    const flag = files[k] ?? flagOf(k, cli);
    const text = parsed.values[flag];
    if (cli.switches?.includes(k)) {
      if (text === true) input[k] = true;
      continue;
    }
    if (Array.isArray(text)) {
      // A list field: its flag given once per item, each read as the items' type.
      const items = (schema.properties[k]?.['items'] ?? {}) as JsonSchema;
      input[k] = text.map((item) => typed(String(item), items, `--${flag}`));
      continue;
    }
    if (typeof text !== 'string') {
      if (schema.required.includes(k)) throw new UsageError(`--${flag} is required`);
      continue;
    }
    const reader = cli.readers?.[k];
    if (reader) {
      try {
        input[k] = reader(text, `--${flag}`);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : `--${flag} is not valid`);
      }
    } else if (files[k]) {
      let content: string;
      try {
        content = readFileSync(text, 'utf8');
      } catch {
        throw new UsageError(`cannot read the file --${flag} names`);
      }
      // A field that holds JSON (a script) is read from its file as JSON.
      if (schema.properties[k]?.['type'] === 'object') {
        try {
          input[k] = JSON.parse(content) as unknown;
        } catch {
          throw new UsageError(`the file --${flag} names is not valid JSON`);
        }
      } else input[k] = content;
    } else input[k] = typed(text, schema.properties[k] ?? {}, `--${flag}`);
  }
  return { input, json: parsed.values['json'] === true };
}

/**
 * A refusal said with the flags and arguments the operator typed: the field it names, and every
 * input field its message names in backticks (`development` is `--dev` here, a form's field in
 * the UI).
 */
function asCliRefusal(op: AnyOperation, error: unknown): unknown {
  if (!isMeshError(error)) return error;
  const cli = cliFace(op);
  const said = (name: string) =>
    cli?.positionals?.includes(name)
      ? name.toUpperCase()
      : `--${cli?.files?.[name] ?? flagOf(name, cli)}`;
  const invalid = /^invalid_(input|body|query|text)$/.test(error.code);
  const field = error.data?.['field'];
  // Named under `input` in this process, under `path`, `query` or `body` by the server's API.
  const root = typeof field === 'string' ? /^(input|path|query|body)\./.exec(field) : null;
  let message = error.message;
  let data = error.data;
  if (typeof field === 'string' && root) {
    const name = field.slice(root[0].length).split('.')[0] ?? '';
    message = message.replace(`\`${field}\``, said(name)).replace(`field \`${name}\``, said(name));
    data = { ...data, field: said(name) };
  }
  for (const name of Object.keys(op.input.properties))
    message = message.replaceAll(`\`${name}\``, said(name));
  if (message === error.message && data === error.data) return error;
  return new MeshError(invalid ? 'invalid_input' : error.code, message, data);
}

/**
 * The subcommand that runs an operation: its arguments read into the input, the operation run
 * (here or in the server holding this home), its output printed for a person or, with `--json`,
 * as the API's body.
 */
export function operationSubcommand(
  op: AnyOperation,
  preset: Readonly<Record<string, unknown>> = {},
): Subcommand {
  return async (args, io) => {
    const { input, json } = readInput(op, args, preset);
    const { invokeFromCli } = await import('./operation-client.ts');
    const output = await invokeFromCli(op, input).catch((error: unknown) => {
      throw asCliRefusal(op, error);
    });
    const cli = cliFace(op);
    if (json) {
      if (output !== undefined) io.out(JSON.stringify(output, null, 2));
    } else {
      for (const line of cli?.print(output, input) ?? []) io.out(line);
      const note = cli?.note?.(output);
      if (note !== undefined) io.err(note);
    }
    return cli?.exitCode?.(output) ?? 0;
  };
}

/**
 * A command group whose subcommands are operations (`mesh web add`, `mesh web list`, …), and any
 * written by hand beside them (`extra`, which take precedence).
 */
export function operationGroup(
  ops: readonly AnyOperation[],
  extra: Readonly<Record<string, Subcommand>> = {},
): CommandBody {
  const subcommands: Record<string, Subcommand> = {};
  for (const op of ops) {
    const cli = cliFace(op);
    if (!cli) continue;
    subcommands[cli.command[1]] = operationSubcommand(op);
    for (const [verb, preset] of Object.entries(cli.aliases ?? {}))
      subcommands[verb] = operationSubcommand(op, preset);
  }
  return commandGroup({ ...subcommands, ...extra });
}
