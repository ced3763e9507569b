// Highlights, notes and bookmarks: what a submission must hold, and colours as web hex.
import { Reading } from '@bindery/contracts';
import { parseCfi } from './position';

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
  epubcfi?: string;
  page?: number;
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
    out.epubcfi = c.cfi;
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
