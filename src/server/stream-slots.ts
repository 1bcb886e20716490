import { HttpError } from './http-error.ts';

/** How many streams one server holds open at once. */
export const MAX_STREAMS = 64;
/** How many of them one operator token may hold, so one client cannot take them all. */
export const MAX_STREAMS_PER_TOKEN = 16;

/**
 * The streams one server holds open, bounded so idle readers cannot take every connection: in
 * all, and per operator token (the holder), so one client's readers leave room for the rest.
 */
export class StreamSlots {
  private held = 0;
  private readonly byHolder = new Map<string, number>();
  constructor(
    readonly limit = MAX_STREAMS,
    readonly perHolder = MAX_STREAMS_PER_TOKEN,
  ) {}

  /** How many streams are open now. */
  get open(): number {
    return this.held;
  }

  /**
   * Takes a slot for `holder` (an operator token's id), or refuses 429 when the server's or the
   * holder's are all held; the returned function gives it back once.
   */
  take(holder: string): () => void {
    const mine = this.byHolder.get(holder) ?? 0;
    if (this.held >= this.limit || mine >= this.perHolder)
      throw new HttpError(
        'too_many_streams',
        this.held >= this.limit
          ? `this server already holds ${this.limit} live event streams; try again shortly`
          : `this operator token already holds ${this.perHolder} live event streams on this server; close one or try again shortly`,
        { 'retry-after': '5' },
      );
    this.held += 1;
    this.byHolder.set(holder, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= 1;
      const left = (this.byHolder.get(holder) ?? 1) - 1;
      if (left === 0) this.byHolder.delete(holder);
      else this.byHolder.set(holder, left);
    };
  }
}
