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
