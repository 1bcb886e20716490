import { nameField } from '../operations/fields.ts';
import type { InputSchema } from '../operations/input.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import { checkBackendUrl } from './backend-url.ts';

/*
 * The kinds of a rented-backend family (workspace backends, browser backends), declared once as
 * data: which kinds there are, which take an API key, which are for development only, and the
 * settings each kind takes. The add operation's input schema, the check of what an operator
 * gives, and the settings form are all read from it, so a kind or a setting is added in one place.
 * Pure: the CLI reads these declarations for its help without loading a store.
 */

/** One kind of backend a family can run. */
export interface RentedKind {
  readonly name: string;
  /** How the kind is listed: `local (bubblewrap)`. */
  readonly label: string;
  /** Whether it rents from a vendor with an API key (stored encrypted as the backend's secret). */
  readonly keyed: boolean;
  /** Whether it runs on this machine and may only be registered as a development backend. */
  readonly developmentOnly: boolean;
}

/** A setting a kind takes: an input field, stored under the same name in the row's settings. */
export interface RentedSetting {
  readonly field: string;
  /** Said in the schema, the help and the form: `e2b: the sandbox template, by name or id`. */
  readonly description: string;
  readonly maxLength: number;
  /** The kinds that take it, and those of them that must be given it. */
  readonly kinds: readonly string[];
  readonly requiredBy?: readonly string[];
  /** A vendor URL (https, or loopback http on a development backend), or a pattern to match. */
  readonly format: 'url' | { readonly pattern: RegExp; readonly what: string };
}

/** A family's kinds and settings. */
export interface RentedKinds {
  /** What one is called: `workspace backend`. */
  readonly noun: string;
  readonly kinds: readonly RentedKind[];
  readonly settings: readonly RentedSetting[];
}

/** A backend name, as the operations' name field takes it: 1-63 lowercase letters, digits, "-" or "_". */
const NAME_FIELD = nameField('the name to register it under');
const NAME = new RegExp(NAME_FIELD.pattern);

/** A new backend as the add operation takes it (the input's fields, snake_case). */
export type NewRentedBackend = Readonly<Record<string, unknown>> & {
  readonly name: string;
  readonly kind: string;
  readonly development?: boolean;
  readonly api_key?: string;
};

/** What a checked new backend stores: its kind, development mark, settings and key. */
export interface CheckedBackend {
  readonly kind: string;
  readonly development: boolean;
  readonly settings: Readonly<Record<string, string>>;
  /** The API key to capture with it, trimmed (a key file's newline is not part of it). */
  readonly apiKey: string | undefined;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

function refuse(message: string, field?: string): MeshError {
  return new MeshError('invalid_backend', message, field ? { field: `input.${field}` } : {});
}

/**
 * Checks a new backend against its family's declaration: its name, its kind, the development
 * mark a local kind needs, the key a vendor kind needs, and each setting (taken by the kind, and
 * well formed). A refusal names the field, never its value.
 */
export function checkNewBackend(family: RentedKinds, input: NewRentedBackend): CheckedBackend {
  const { noun } = family;
  if (!NAME.test(input.name))
    throw refuse('a backend name is 1-63 lowercase letters, digits, "-" or "_"', 'name');
  const kind = family.kinds.find((k) => k.name === input.kind);
  if (!kind)
    throw refuse(
      `unknown ${noun} kind ${quoteName(input.kind)}; the kinds are ${family.kinds.map((k) => k.name).join(', ')}`,
      'kind',
    );
  const development = input.development === true;
  const a = `${article(kind.name)} ${kind.name} ${noun}`;
  if (kind.developmentOnly && !development)
    throw new MeshError(
      'development_only',
      `the ${kind.name} ${noun} is for development only: add it with \`development\` set to say so`,
      { field: 'input.development' },
    );
  const apiKey = typeof input.api_key === 'string' ? input.api_key.trim() : undefined;
  if (!kind.keyed && input.api_key !== undefined)
    throw refuse(`${a} takes no API key (\`api_key\`)`, 'api_key');
  if (kind.keyed && !apiKey) throw refuse(`${a} needs its API key (\`api_key\`)`, 'api_key');
  const settings: Record<string, string> = {};
  for (const setting of family.settings) {
    const value = input[setting.field];
    if (value === undefined) {
      if (setting.requiredBy?.includes(kind.name))
        throw refuse(`${a} needs \`${setting.field}\``, setting.field);
      continue;
    }
    if (!setting.kinds.includes(kind.name))
      throw refuse(`${a} takes no \`${setting.field}\``, setting.field);
    if (typeof value !== 'string') throw refuse(`\`${setting.field}\` is not text`, setting.field);
    if (setting.format === 'url')
      settings[setting.field] = checkBackendUrl(value, {
        field: setting.field,
        development,
        developmentField: 'development',
        code: 'invalid_backend',
      });
    else if (setting.format.pattern.test(value)) settings[setting.field] = value;
    else throw refuse(`\`${setting.field}\` is not ${setting.format.what}`, setting.field);
  }
  // A kind that takes no key was refused one above: the key is the keyed kind's, or none.
  return { kind: kind.name, development, settings, apiKey };
}

/** The add operation's input schema, read from the declaration. */
export function addInputSchema(family: RentedKinds): InputSchema {
  const settings = Object.fromEntries(
    family.settings.map((s) => [
      s.field,
      { type: 'string', minLength: 1, maxLength: s.maxLength, description: s.description },
    ]),
  );
  const keyed = family.kinds.filter((k) => k.keyed).map((k) => k.name);
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind'],
    properties: {
      name: NAME_FIELD,
      kind: {
        enum: family.kinds.map((k) => k.name),
        description: family.kinds.map((k) => k.label).join(', '),
      },
      development: {
        type: 'boolean',
        description: `acknowledges a development-only backend (${family.kinds
          .filter((k) => k.developmentOnly)
          .map((k) => k.name)
          .join(', ')} needs it); on a vendor, allows a loopback http URL`,
      },
      ...settings,
      api_key: {
        type: 'string',
        minLength: 1,
        maxLength: 65536,
        description: `${keyed.join(', ')}: the API key (stored encrypted)`,
      },
    },
  };
}
