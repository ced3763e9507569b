// Highlights, notes and bookmarks: what a submission must hold, colours as web hex, and their place
// in the book in the same canonical form as a reading position (docs/decisions.md, "Reading:
// annotation positions"): a span {start, end} of {spine, offset}, read from KOReader's pos0/pos1
// XPointers or the web's EPUB CFI (a range for a highlight), healed like a position, confirmed or
// moved by the highlighted text, and written back in every notation.
import { Reading } from '@bindery/contracts';
import { CONTEXT_MIN, parseCfi, percentageAt } from './position';
import * as L from '@bindery/locator';

type Index = L.LocatorIndex;
type Canonical = L.Canonical;
type Heal = L.Heal;

export type Kind = 'highlight' | 'note' | 'bookmark';
export const KINDS: readonly Kind[] = ['highlight', 'note', 'bookmark'];

/** A colour as stored: reader palette names (KOReader) become the web's hex swatches at the boundary. */
export function parseColor(v: unknown): string | null | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return null;
  const s = v.trim().toLowerCase();
  const named = Reading.paletteHexOf(s);
  if (named) return named;
  const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/.exec(s);
  if (!m) return null;
  const h = m[1]!;
  return '#' + (h.length === 3 ? [...h].map((c) => c + c).join('') : h);
}

export interface AnnotationPosition {
  percentage?: number;
  /** an EPUB CFI: a range for a span, a point for a bookmark */
  epubcfi?: string;
  page?: number;
  /** KOReader's XPointers of the start and end (or its own notation, kept as sent when not one) */
  pos0?: string;
  pos1?: string;
  chapter?: string;
}

/** The position of an annotation: a fraction, an EPUB CFI, a page, or a reader's own pos0/pos1. */
export function parseAnnotationPosition(raw: unknown): { ok: true; value: AnnotationPosition } | { ok: false; message: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, message: 'position is required (percentage, epubcfi, page or pos0)' };
  const p = raw as Record<string, unknown>;
  const out: AnnotationPosition = {};
  if (p.percentage !== undefined && p.percentage !== null) {
    const n = typeof p.percentage === 'number' ? p.percentage : Number(p.percentage);
    if (!Number.isFinite(n) || n < 0 || n > 100) return { ok: false, message: Reading.ReadingMessages.percentageRange };
    out.percentage = Math.round((n > 1 ? n / 100 : n) * 1e6) / 1e6;
  }
  if (p.epubcfi !== undefined && p.epubcfi !== null && p.epubcfi !== '') {
    const c = typeof p.epubcfi === 'string' && p.epubcfi.length <= 4096 ? parseCfi(p.epubcfi) : null;
    if (!c) return { ok: false, message: Reading.ReadingMessages.invalidEpubcfi };
    // a range stays a range (a highlight's two ends); a point is kept as read
    const raw = (p.epubcfi as string).trim();
    out.epubcfi = /^epubcfi\(.*\)$/s.test(raw) ? raw : `epubcfi(${raw})`;
  }
  if (p.page !== undefined && p.page !== null) {
    const n = Number(p.page);
    if (!Number.isInteger(n) || n < 1) return { ok: false, message: 'page must be a whole number of at least 1' };
    out.page = n;
  }
  for (const k of ['pos0', 'pos1', 'chapter'] as const) {
    const v = p[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || v.length > 4096) return { ok: false, message: `${k} must be text` };
    out[k] = v;
  }
  if (out.percentage === undefined && !out.epubcfi && out.page === undefined && !out.pos0)
    return { ok: false, message: 'position is required (percentage, epubcfi, page or pos0)' };
  return { ok: true, value: out };
}

/** A span of the book: a point when `end` is null (a bookmark). */
export interface Anchor {
  start: Canonical;
  end: Canonical | null;
}

const before = (a: Canonical, b: Canonical) => a.spine < b.spine || (a.spine === b.spine && a.offset < b.offset);
/** A converter's words name its notation; an annotation's say which end they are about. */
const relabel = (hs: Heal[], from: string, to: string): Heal[] =>
  hs.map((h) => ({ code: h.code, message: h.message.startsWith(from) ? to + h.message.slice(from.length) : h.message }));

/**
 * The span the notations sent name, healed where they do not fit the book: KOReader's pos0/pos1
 * XPointers first, else the web's CFI (a range's two ends). Null when nothing places it (a
 * percentage or a page alone, or a reader's own notation that is no XPointer).
 */
export function anchorOf(index: Index, p: AnnotationPosition): { anchor: Anchor | null; healed: Heal[] } {
  const healed: Heal[] = [];
  let start: Canonical | null = null;
  let end: Canonical | null = null;
  if (p.pos0 && L.isXPointer(p.pos0)) {
    const a = L.xpointerToCanonical(index, p.pos0);
    if (!a) healed.push(L.heal('not-a-place', 'pos0: not a place in this book; kept as sent'));
    else {
      start = a.pos;
      healed.push(...relabel(a.healed, 'xpointer:', 'pos0:'));
      if (p.pos1 && L.isXPointer(p.pos1)) {
        const b = L.xpointerToCanonical(index, p.pos1);
        if (b) {
          end = b.pos;
          healed.push(...relabel(b.healed, 'xpointer:', 'pos1:'));
        } else healed.push(L.heal('not-a-place', 'pos1: not a place in this book; the annotation is a point at pos0'));
      }
    }
  } else if (p.pos0 && !p.epubcfi) {
    healed.push(L.heal('not-a-place', 'pos0: not a place in this book; kept as sent'));
  } else if (p.epubcfi) {
    // parsed once: the start and, for a range, the end
    const c = L.parseCfi(p.epubcfi);
    const a = c && L.cfiToCanonical(index, c);
    if (c && a) {
      start = a.pos;
      // the wrapper was reported when the CFI was read; a range is read as a range here
      healed.push(...a.healed.filter((h) => h.code !== 'cfi-range' && h.code !== 'cfi-wrapper'));
      const b = c.end && L.cfiToCanonical(index, c.end);
      if (b) {
        end = b.pos;
        healed.push(...relabel(b.healed, 'epubcfi:', 'epubcfi end:'));
      }
    }
  }
  if (!start) return { anchor: null, healed };
  if (end && before(end, start)) {
    healed.push(L.heal('span-reversed', 'the end came before the start; the two were swapped'));
    [start, end] = [end, start];
  }
  return { anchor: { start, end }, healed };
}

/** The annotation kinds whose `text` is the book's text (a bookmark's is the reader's label). */
export const quotes = (kind: Kind) => kind === 'highlight' || kind === 'note';

/** The highlighted text as the catalog looks for it (white space runs as one space, at most 1000 characters). */
export function needleOf(text: string | undefined): { needle: string; cut: boolean } | null {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  if (flat.length < CONTEXT_MIN) return null;
  return { needle: flat.slice(0, 1000), cut: flat.length > 1000 };
}

/**
 * The highlighted text was found at `found` (the occurrence nearest the span's start): a span that
 * does not start there moves there, and one known by its percentage alone is placed there.
 */
export function byText(index: Index, anchor: Anchor | null, found: Canonical & { end: number }, cut: boolean, text: string): { anchor: Anchor; healed: Heal[] } {
  const lead = text.length - text.trimStart().length;
  if (anchor && anchor.start.spine === found.spine && found.offset >= anchor.start.offset && found.offset - anchor.start.offset <= lead) {
    // a highlight sent as a point (a point CFI, pos0 alone) where its text starts spans that text:
    // a reader such as KOReader cannot draw a highlight without its end
    if (anchor.end || found.end <= found.offset) return { anchor, healed: [] };
    const end = { spine: found.spine, offset: found.end };
    return { anchor: { start: anchor.start, end }, healed: [L.heal('text-end', 'text: the highlight was a point; its end was set where its text ends')] };
  }
  const href = index.spine[found.spine]?.[1] ?? '';
  const n = index.docs[found.spine]?.n ?? found.end;
  // a text cut to its first 1000 characters keeps the span's length, where it had one
  const span = anchor?.end && anchor.end.spine === anchor.start.spine ? anchor.end.offset - anchor.start.offset : 0;
  const end = cut ? Math.min(n, found.offset + span) : found.end;
  return {
    anchor: { start: { spine: found.spine, offset: found.offset }, end: end > found.offset ? { spine: found.spine, offset: end } : null },
    healed: [
      anchor
        ? L.heal('text-moved', `text: not found at the position; found in ${href} and moved there`)
        : L.heal('text-placed', `text: found in ${href}; the position was set from it`),
    ],
  };
}

/** Writes every notation of the span into the position: the CFI (a range), pos0/pos1, and the percentage when it disagrees. */
export function placeAnnotation(index: Index, p: AnnotationPosition, a: Anchor): Heal[] {
  p.epubcfi = a.end ? L.canonicalToCfiRange(index, a.start, a.end) : L.canonicalToCfi(index, a.start);
  p.pos0 = L.canonicalToXPointer(index, a.start);
  if (a.end) p.pos1 = L.canonicalToXPointer(index, a.end);
  else delete p.pos1;
  const pct = percentageAt(index, a.start, p.percentage);
  p.percentage = pct.percentage;
  return pct.healed;
}

/** A fixed-layout book (PDF, CBZ, CBR): the page is the place; past the last page it is the last, and the percentage follows it. */
export function placePage(p: AnnotationPosition, pageCount: number): Heal[] {
  if (p.page === undefined || pageCount < 1) return [];
  const healed: Heal[] = [];
  if (p.page > pageCount) {
    healed.push(L.heal('page-past-end', `page: ${p.page} is past the last page (${pageCount}); moved to the last page`));
    p.page = pageCount;
  }
  const pct = Math.round(L.pageToFraction(p.page, pageCount) * 1e6) / 1e6;
  if (p.percentage !== undefined && Math.abs(p.percentage - pct) > 0.005)
    healed.push(L.heal('percentage', `percentage: ${p.percentage} disagreed with page ${p.page} of ${pageCount}; set from the page`));
  p.percentage = pct;
  return healed;
}
