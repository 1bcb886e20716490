import {
  CONFIG_TYPES,
  configValueFits,
  DISPOSITIONS,
  type ConfigField,
  type ConfigType,
  type Disposition,
} from './package-manifest.ts';
import type { TableReader } from './table-reader.ts';
import { describeTomlValue } from './toml-document.ts';
import type { ValidationContext } from './validation-context.ts';
import { CONFIG_KEY_PATTERN, SECRET_KIND_PATTERN } from './versioning.ts';
import { checkDescription } from './text-rules.ts';

function readDisposition(r: TableReader, ctx: ValidationContext): Disposition | undefined {
  const value = r.string('disposition', { required: true });
  if (value === undefined) return undefined;
  if ((DISPOSITIONS as readonly string[]).includes(value)) return value as Disposition;
  ctx.sink.add(
    'disposition_unknown',
    r.at('disposition'),
    `must be one of ${DISPOSITIONS.join(', ')} (an unknown disposition fails closed)`,
  );
  return undefined;
}

function readType(r: TableReader, ctx: ValidationContext): ConfigType | undefined {
  const value = r.string('type', { required: true });
  if (value === undefined) return undefined;
  if ((CONFIG_TYPES as readonly string[]).includes(value)) return value as ConfigType;
  ctx.sink.add('config_type_unknown', r.at('type'), `must be one of ${CONFIG_TYPES.join(', ')}`);
  return undefined;
}

/**
 * Reads one `[[config]]` entry. A secret is a string with a `kind` and no default (a default would
 * put a credential in the repository; it is refused without being echoed); `kind` is forbidden on
 * the other dispositions, whose default must match the declared type.
 */
function readConfigField(r: TableReader, ctx: ValidationContext): ConfigField | undefined {
  const key = r.string('key', { required: true });
  if (key !== undefined && !CONFIG_KEY_PATTERN.test(key)) {
    ctx.sink.add('config_key_invalid', r.at('key'), `must match ${CONFIG_KEY_PATTERN.source}`);
  }
  const disposition = readDisposition(r, ctx);
  const type = readType(r, ctx);
  const description = r.string('description', { required: true });
  const descriptionOk = checkDescription(r, description, ctx);
  const fallback = r.raw('default');
  const kind = r.string('kind', { required: false });
  r.finish();

  if (disposition === 'secret') {
    if (type !== undefined && type !== 'string') {
      ctx.sink.add('secret_type_not_string', r.at('type'), 'a secret is always a string');
    }
    if (fallback !== undefined) {
      ctx.sink.add(
        'secret_default_forbidden',
        r.at('default'),
        'a secret may not have a default (the value is not shown here)',
      );
    }
    if (kind === undefined && r.raw('kind') === undefined) {
      ctx.sink.add(
        'secret_kind_missing',
        r.at('kind'),
        'a secret must declare the secret kind it provides (what `secret:<kind>` needs name)',
      );
    } else if (kind !== undefined && !SECRET_KIND_PATTERN.test(kind)) {
      ctx.sink.add('secret_kind_invalid', r.at('kind'), `must match ${SECRET_KIND_PATTERN.source}`);
    }
  } else if (disposition !== undefined && r.raw('kind') !== undefined) {
    ctx.sink.add(
      'secret_kind_forbidden',
      r.at('kind'),
      'only a secret provides a secret kind; remove it or make the field a secret',
    );
  }
  if (disposition !== 'secret' && fallback !== undefined && type !== undefined) {
    if (!configValueFits(type, fallback)) {
      ctx.sink.add(
        'default_type_mismatch',
        r.at('default'),
        `must be ${type === 'integer' ? 'an integer' : `a ${type}`}, not ${describeTomlValue(fallback)}`,
      );
    }
  }
  if (key === undefined || disposition === undefined || type === undefined) return undefined;
  if (description === undefined || !descriptionOk) return undefined;
  if (disposition === 'secret') {
    if (type !== 'string' || kind === undefined || fallback !== undefined) return undefined;
    return { disposition, key, type, kind, description };
  }
  if (fallback !== undefined && !configValueFits(type, fallback)) return undefined;
  return fallback === undefined
    ? { disposition, key, type, description }
    : { disposition, key, type, default: fallback, description };
}

/** A secret config entry's declared kind, for need mapping. */
export interface SecretProvider {
  readonly kind: string;
  /** The entry's path, e.g. `config[0]`. */
  readonly path: string;
}

/**
 * Reads `[[config]]`: every field, refusing duplicate keys. Returns the fields that are valid;
 * invalid ones are reported and left out (the manifest as a whole is refused anyway).
 */
export function readConfig(
  readers: readonly TableReader[],
  ctx: ValidationContext,
): { fields: ConfigField[]; providers: SecretProvider[] } {
  const fields: ConfigField[] = [];
  const providers: SecretProvider[] = [];
  const seen = new Map<string, string>();
  for (const r of readers) {
    const field = readConfigField(r, ctx);
    // Need mapping counts every declared secret kind, even on an entry refused for another
    // reason, so one mistake is not reported again as a dangling need.
    const kind = r.values['kind'];
    if (r.values['disposition'] === 'secret' && typeof kind === 'string') {
      providers.push({ kind, path: r.path });
    }
    const key = r.values['key'];
    if (typeof key === 'string') {
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.sink.add('config_key_duplicate', r.at('key'), `repeats the key of ${first}`);
        continue;
      }
      seen.set(key, r.path);
    }
    if (field) fields.push(field);
  }
  return { fields, providers };
}
