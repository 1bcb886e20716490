/** A UUID as Mesh writes them (lowercase hex): for body schemas and path patterns. */
export const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

const UUID = new RegExp(`^${UUID_SOURCE}$`, 'i');

/** Whether a path or query value can be an id at all (checked before it reaches SQL). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
