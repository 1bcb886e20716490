import type { TableReader } from './table-reader.ts';
import type { ValidationContext } from './validation-context.ts';

/**
 * Control characters (Unicode Cc) a description may not hold. Tab and line feed are text (a
 * multi-line TOML string has them), and so is a carriage return that begins a CRLF (a manifest
 * edited on Windows); every other one (NUL, ESC and its terminal sequences, backspace, C1) is
 * refused: descriptions reach prompts, the UI and terminals verbatim.
 */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x09 || c === 0x0a) continue;
    if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Refuses a description holding a control character, naming the field; true when it is clean. */
export function checkDescription(
  r: TableReader,
  description: string | undefined,
  ctx: ValidationContext,
): boolean {
  if (description === undefined || !hasControlCharacter(description)) return true;
  ctx.sink.add(
    'text_control_character',
    r.at('description'),
    'holds a control character (only tab, line feed and CRLF are allowed)',
  );
  return false;
}
