// The web reader's active reading time (decision 120): the seconds the page was visible and the
// reader did something (a key, a tap, a scroll, a page turn) within the last IDLE_MS. Each saved
// position takes the seconds counted since the previous one (`active_seconds`), so a book left open
// on a screen no one reads counts two minutes at most, and a hidden tab counts nothing.

/** after this long without an input or a page turn, the reader is taken to be away */
export const IDLE_MS = 120_000;
/** the most one save may carry (the position input refuses more: decision 120) */
export const MAX_ACTIVE_SECONDS = 86_400;

export interface ActiveClock {
  /** an input or a page turn at `at` (ms): active from now until IDLE_MS later, if the page is visible */
  touch(at: number): void;
  /** the page became hidden (nothing counts) or visible (coming back counts as an input) at `at` */
  visible(shown: boolean, at: number): void;
  /** the whole seconds counted up to `at` and not taken before (at most MAX_ACTIVE_SECONDS) */
  take(at: number): number;
}

/** A clock that starts visible or not at `at` (opening the book counts as an input). */
export function activeClock(shown: boolean, at: number): ActiveClock {
  let counted = 0;
  /** counted up to this instant */
  let since = at;
  /** active until this instant (an input's time + IDLE_MS); 0 while the page is hidden */
  let until = shown ? at + IDLE_MS : 0;
  let isShown = shown;
  /** adds the active part of [since, at] */
  const settle = (t: number) => {
    if (t <= since) return;
    const end = Math.min(t, until);
    if (end > since) counted += end - since;
    since = t;
  };
  return {
    touch(t) {
      settle(t);
      if (isShown) until = Math.max(until, t + IDLE_MS);
    },
    visible(s, t) {
      settle(t);
      isShown = s;
      until = s ? t + IDLE_MS : 0;
    },
    take(t) {
      settle(t);
      const seconds = Math.min(MAX_ACTIVE_SECONDS, Math.floor(counted / 1000));
      counted -= seconds * 1000;
      return seconds;
    },
  };
}

/** The page's clock, told of every key, tap, wheel and touch on the page and of its visibility. */
export function watchActivity(doc: Document = document): ActiveClock {
  const clock = activeClock(doc.visibilityState === 'visible', Date.now());
  const touched = () => clock.touch(Date.now());
  for (const type of ['keydown', 'pointerdown', 'wheel', 'touchstart'] as const) doc.addEventListener(type, touched, { capture: true, passive: true });
  doc.addEventListener('visibilitychange', () => clock.visible(doc.visibilityState === 'visible', Date.now()));
  return clock;
}
