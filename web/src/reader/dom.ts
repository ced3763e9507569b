// The reader page's elements, found by id: the page (web/src/pages/reader.tsx) always has those the
// reader asks for, so a missing one, or one of another kind, is a page that changed without the reader.

type ElementClass<E extends HTMLElement> = abstract new (...args: never[]) => E;

/** The page's element with this id, of this kind (an HTMLElement unless said). */
export function byId(id: string): HTMLElement;
export function byId<E extends HTMLElement>(id: string, kind: ElementClass<E>): E;
export function byId<E extends HTMLElement>(id: string, kind?: ElementClass<E>): HTMLElement {
  const el = document.getElementById(id);
  if (!(el instanceof (kind ?? HTMLElement))) throw new Error(`the reader page has no ${kind?.name ?? 'element'} #${id}`);
  return el;
}

/**
 * Whether an event's target is (or is inside) an element matching `selector`. A target in a book's
 * section is of that frame's own window, not an instance of this one's Element: hence no instanceof.
 */
export function within(target: EventTarget | null, selector: string): boolean {
  return target !== null && 'closest' in target && typeof target.closest === 'function' && Boolean(target.closest(selector));
}
