/** A trie: each node's children by next character (or token), and whether a word ends there. */
export interface TrieNode {
  end: boolean;
  readonly next: Map<string, TrieNode>;
}

/** The trie of `words` (strings, or sequences of tokens), one node per distinct prefix. */
export function buildTrie(words: Iterable<Iterable<string>>): TrieNode {
  const root: TrieNode = { end: false, next: new Map() };
  for (const word of words) {
    let node = root;
    for (const char of word) {
      let child = node.next.get(char);
      if (!child) node.next.set(char, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
  }
  return root;
}

/**
 * One pattern source matching any of `words`, longest match first, shaped as a trie: shared
 * prefixes are written once, so at each text position only the branches of the characters seen
 * so far are tried. A word that is a prefix of another is an optional tail (greedy, so the longer
 * word wins where both match).
 */
export function trieSource(words: readonly string[]): string {
  return tokenTrieSource(
    words.map((word) => Array.from(word, escapeRegExp)),
    '',
  );
}

/**
 * {@link trieSource} over words of tokens, each token a pattern source of its own and `join`
 * between two tokens of a word: the hex of a secret's bytes with separators between them, its
 * characters each in any escaped spelling.
 */
export function tokenTrieSource(words: readonly (readonly string[])[], join: string): string {
  const root = buildTrie(words);
  // Iterative, children before parents: a long form nests as deep as it is long.
  const order: TrieNode[] = [];
  const stack: TrieNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as TrieNode;
    order.push(node);
    for (const child of node.next.values()) stack.push(child);
  }
  // What may follow a node's token: its children's tokens, each with what follows it.
  const after = new Map<TrieNode, string>();
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i] as TrieNode;
    const branches = [...node.next].map(([token, child]) => {
      const rest = after.get(child) ?? '';
      if (rest === '') return token;
      return child.end ? `${token}(?:${join}${rest})?` : `${token}${join}${rest}`;
    });
    after.set(node, branches.length <= 1 ? (branches[0] ?? '') : `(?:${branches.join('|')})`);
  }
  return after.get(root) ?? '';
}

/** `text` with every character a regular expression gives meaning to escaped. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
