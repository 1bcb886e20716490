/** A tool in the loaded set, with what its schema costs on every request. */
export interface LoadedTool {
  readonly name: string;
  readonly tokens: number;
}

/** What one load did to the set. */
export interface LoadChange {
  /** Offered from the next request on, and not before. */
  readonly loaded: readonly string[];
  /** Already loaded; now the most recently used. */
  readonly refreshed: readonly string[];
  /** Loaded before and no longer: the least recently used, to stay within the share. */
  readonly unloaded: readonly string[];
  /** Found by this load but not kept: the set's share was spent on the better matches. */
  readonly skipped: readonly string[];
}

/**
 * The tools a search loaded, bounded by a share of the input budget in tokens and ordered by
 * use: when a load would pass the share, the least recently used go first. A tool larger than the
 * whole share is kept alone rather than leaving the set empty.
 */
export class LoadedSet {
  readonly capacity: number;
  // Insertion order is recency: the first entry is the least recently used.
  readonly #tools = new Map<string, number>();
  #tokens = 0;

  constructor(capacity: number) {
    this.capacity = Math.max(0, capacity);
  }

  /** Loaded names, least recently used first. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** What the loaded schemas cost, in tokens. */
  get tokens(): number {
    return this.#tokens;
  }

  get size(): number {
    return this.#tools.size;
  }

  /** Marks a loaded tool as just used; false when it is not loaded. */
  touch(name: string): boolean {
    const tokens = this.#tools.get(name);
    if (tokens === undefined) return false;
    this.#tools.delete(name);
    this.#tools.set(name, tokens);
    return true;
  }

  /**
   * Loads tools in order of preference (the first is the one most wanted, and ends up the most
   * recently used), then unloads the least recently used until the set fits its share again.
   */
  load(tools: readonly LoadedTool[]): LoadChange {
    const fresh = new Set<string>();
    const refreshed: string[] = [];
    for (const tool of [...tools].reverse()) {
      if (this.touch(tool.name)) {
        refreshed.unshift(tool.name);
        continue;
      }
      this.#tools.set(tool.name, tool.tokens);
      this.#tokens += tool.tokens;
      fresh.add(tool.name);
    }
    const unloaded: string[] = [];
    const skipped: string[] = [];
    for (const [name, tokens] of this.#tools) {
      if (this.#tokens <= this.capacity || this.#tools.size === 1) break;
      this.#tools.delete(name);
      this.#tokens -= tokens;
      if (fresh.delete(name)) skipped.push(name);
      else unloaded.push(name);
    }
    const loaded = tools.map((t) => t.name).filter((n) => fresh.has(n));
    return { loaded, refreshed: refreshed.filter((n) => this.#tools.has(n)), unloaded, skipped };
  }
}
