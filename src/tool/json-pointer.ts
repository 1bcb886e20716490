/**
 * The node a same-document `$ref` of JSON pointer form names (`#`, `#/$defs/a`, `#/items/0`):
 * each segment unescaped (`~1`, `~0`, percent-encoding), array segments by index. Undefined when
 * it names nothing, is malformed, or is not a pointer into this document.
 */
export function resolveJsonPointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(key)) node = node[Number(key)];
    else if (typeof node === 'object' && node !== null && Object.hasOwn(node, key))
      node = (node as Record<string, unknown>)[key];
    else return undefined;
  }
  return node;
}
