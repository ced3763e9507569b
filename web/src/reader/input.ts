// How the reader is driven: keys that turn pages (whatever button has the focus, never while a text
// field, a list or a slider has it), tap zones (the outer thirds turn, the centre shows or hides the
// chrome), and immersive reading on a phone or touch screen: the toolbar and page bar lie over the
// book and hide after the first page turn, so the book keeps the whole screen.

import { within } from './dom';

/** Controls that use the arrow keys themselves: text fields, lists, sliders, editable text. */
const OWN_ARROWS = 'input:not([type=checkbox], [type=radio], [type=button], [type=submit], [type=reset]), select, textarea, [contenteditable]:not([contenteditable=false])';
/** Controls that Space (and Enter) act on. */
const ACTIVE = 'button, a[href], summary, input, [role=button]';

/** A keydown listener turning pages with arrows, Page Up/Down and Space; `left`/`right` are the screen's sides. */
type Turn = () => unknown;
export function pageKeys({ prev, next, left = prev, right = next }: { prev: Turn; next: Turn; left?: Turn; right?: Turn }): (e: KeyboardEvent) => void {
  return (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    const at = (sel: string) => within(e.target, sel);
    if (at(OWN_ARROWS)) return;
    let go: Turn | null = null;
    if (e.key === 'ArrowLeft') go = left;
    else if (e.key === 'ArrowRight') go = right;
    else if (e.key === 'PageUp') go = prev;
    else if (e.key === 'PageDown') go = next;
    else if (e.key === ' ' && !at(ACTIVE)) go = e.shiftKey ? prev : next;
    if (!go) return;
    e.preventDefault();
    void go();
  };
}

/** Which part of a box a point falls in: the left or right third, or the centre. */
export const zone = (x: number, left: number, width: number): 'left' | 'right' | 'centre' => (x < left + width / 3 ? 'left' : x > left + (2 * width) / 3 ? 'right' : 'centre');

const html = document.documentElement.classList;

/**
 * Immersive reading: on a touch screen (a phone, a tablet) the chrome lies over the book, is shown on opening,
 * hidden by a page turn and shown again by a tap in the centre (or the Tab key, or focus reaching it).
 */
/** The chrome's controls: `turned` after a page turn, `toggle` on a tap in the centre. */
export interface Chrome {
  immersive: boolean;
  /** a page was turned: the chrome goes (immersive only, not while it is in use) */
  turned(): void;
  toggle(): void;
}

export function chrome(): Chrome {
  const on = matchMedia('(pointer: coarse)').matches;
  if (on) html.add('reader-immersive');
  const bars = () => [document.querySelector('.reader-bar'), document.getElementById('page-bar')].filter((b) => b !== null);
  // not hidden while a menu is open or something is being typed in it
  const busy = () => {
    const active = document.activeElement;
    return document.querySelector('.reader-menu[open]') || (bars().some((b) => b.contains(active)) && active?.matches(OWN_ARROWS));
  };
  const show = (shown: boolean) => {
    html.toggle('chrome-hidden', !shown);
    document.getElementById('reader')?.setAttribute('data-chrome', shown ? 'shown' : 'hidden');
  };
  addEventListener('keydown', (e) => {
    if (e.key === 'Tab') show(true);
  });
  for (const b of bars()) b.addEventListener('focusin', () => show(true));
  show(true);
  return {
    immersive: on,
    /** a page was turned: the chrome goes (immersive only, not while it is in use) */
    turned() {
      if (on && !busy()) show(false);
    },
    toggle() {
      if (on) show(html.contains('chrome-hidden'));
    },
  };
}
