import type { RunDraft } from '../run/records.ts';

/** How often, at most, a streaming round's text is saved for live views. */
export const DRAFT_WRITE_MS = 150;

/** The text a round's model call has written so far, saved for live views while it streams. */
export interface ReplyDraft {
  /** The call's `onText`: the text so far of `attempt`. */
  readonly onText: (text: string, attempt: number) => void;
  /** Stops saving and waits for a save under way, so none lands after the round's response. */
  close(): Promise<void>;
}

/**
 * Saves a streaming round's text with `save`, at most one save at a time and one per `everyMs`
 * (the latest text wins; the pieces in between are never queued). A save that fails or finds the
 * lease gone ends the saving: the draft is a courtesy to watchers, never the turn's failure.
 */
export function replyDraft(
  round: number,
  save: (draft: RunDraft) => Promise<boolean>,
  everyMs = DRAFT_WRITE_MS,
): ReplyDraft {
  let latest: RunDraft | undefined;
  let saved: RunDraft | undefined;
  let saving: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastAt = 0;
  let open = true;

  function schedule(): void {
    if (!open || saving || timer) return;
    const wait = lastAt + everyMs - Date.now();
    if (wait > 0) timer = setTimeout(flush, wait);
    else flush();
  }

  function flush(): void {
    timer = undefined;
    const draft = latest;
    if (!open || draft === undefined || draft === saved) return;
    lastAt = Date.now();
    saving = save(draft)
      .then(
        (kept) => {
          saved = draft;
          if (!kept) open = false;
        },
        () => {
          open = false;
        },
      )
      .finally(() => {
        saving = undefined;
        if (latest !== saved) schedule();
      });
  }

  return {
    onText(text, attempt) {
      // Nothing written yet is nothing to show (a round that only calls tools stays silent).
      if (text === '' && (latest === undefined || latest.attempt === attempt)) return;
      latest = { round, attempt, body: text };
      schedule();
    },
    async close() {
      open = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await saving;
    },
  };
}
