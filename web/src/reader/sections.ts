// The book's sections weighed as every device's position weighs them: by the text length the
// catalog's locator index gives each (GET /api/media-items/<id>/sections), so the reader's
// percentage is the one the reading service, KOReader and the Kobo carry. Foliate's own fractions
// weigh sections by their file sizes (markup and all), which can put a page many percent away.

/** The server's sections of the book (asked while the file loads), or null when it has none. */
export async function fetchSections(item: string): Promise<unknown> {
  try {
    const r = await fetch(`/api/media-items/${encodeURIComponent(item)}/sections`, { credentials: 'same-origin' });
    return r.ok ? (await r.json()).sections : null;
  } catch {
    return null;
  }
}

/** Cumulative section bounds [0, …, 1] (one more than the sections), or null when they are not the book's. */
export function sectionBounds(sections: unknown, count: number): number[] | null {
  if (!Array.isArray(sections) || sections.length !== count) return null;
  // an empty section still counts as one unit, as the reading service counts it
  const weights = sections.map((s: { length?: unknown }) => Math.max(Number(s.length) || 0, 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const bounds = [0];
  let acc = 0;
  for (const w of weights) {
    acc += w;
    bounds.push(acc / total);
  }
  bounds[bounds.length - 1] = 1;
  return bounds;
}

/** The section a share of the book falls in, and the share of that section. */
export function sectionAt(bounds: number[], fraction: number): { index: number; anchor: number } {
  const f = Math.min(1, Math.max(0, fraction));
  const at = (k: number) => bounds[k] ?? 1;
  let i = 0;
  while (i < bounds.length - 2 && at(i + 1) <= f) i++;
  const span = at(i + 1) - at(i);
  return { index: i, anchor: span > 0 ? Math.min(1, (f - at(i)) / span) : 0 };
}

/**
 * The share of a section's text before a point of its document (a range boundary), in the reading
 * service's measure: UTF-16 units of the body's text. Null when the point is outside the body.
 */
export function textShare(doc: Document | null | undefined, node: Node, offset: number): number | null {
  const body = doc?.body;
  if (!doc || !body || !body.contains(node)) return null;
  const total = (body.textContent ?? '').length;
  if (total === 0) return 0;
  const before = doc.createRange();
  before.setStart(body, 0);
  before.setEnd(node, offset);
  return Math.min(1, before.toString().length / total);
}
