// One position, many notations: what a client submits is checked, normalised to one canonical form
// (a fraction of the book, the CFI as EPUB CFI with its spine step, a page for fixed layout, and the
// restore handles only when known), and every change made to it is reported as healed.
import { Reading } from '@bindery/contracts';
import * as L from '@bindery/locator';

const M = Reading.ReadingMessages;

export interface Position {
  percentage: number;
  context_text?: string;
  epubcfi?: string;
  /** index in the spine counting non-linear items (from the CFI's spine step) */
  spine_index?: number;
  page?: number;
  page_count?: number;
  anchor_href?: string;
  css_selector?: string;
  char_offset?: number;
  /** KOReader's XPointer: derived from the position when the book's locator index is known, else kept as sent */
  xpointer?: string;
  /** UTF-16 offset into the spine document's body text (the canonical position, with spine_index) */
  doc_offset?: number;
}

export type Parsed = { ok: true; position: Position; healed: string[]; force: boolean } | { ok: false; message: string };

const CONTEXT_MAX = 1000;
/** a position at or below this fraction is "the first page" for the guard */
export const FIRST_PAGE = 0.01;
/** positions closer than this agree */
export const AGREE = 0.01;

const num = (v: unknown): number | undefined => {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
};
const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Parses an EPUB CFI far enough to check it and find its spine step; a range collapses to its start. */
export function parseCfi(raw: string): { cfi: string; spineIndex: number; healed: string[] } | null {
  const c = L.parseCfi(raw);
  return c ? { cfi: c.cfi, spineIndex: c.spineStep / 2 - 1, healed: L.healMessages(c.healed) } : null;
}

/**
 * Checks and normalises a submitted position. `pageCount` is the catalog's page count of a
 * fixed-layout book, when it knows one. `clampPage`: a page past the last is healed to the last
 * (KOReader's stock sync, which shows any refusal as a sync error) instead of refused.
 */
export function parsePosition(input: Record<string, unknown>, pageCount: number | null = null, { clampPage = false }: { clampPage?: boolean } = {}): Parsed {
  const healed: string[] = [];
  const pos: Partial<Position> = {};
  const str = (k: string, max: number): string | undefined | null => {
    const v = input[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string' || v.length > max) return null;
    return v;
  };
  const sent = input.page === undefined || input.page === null ? undefined : num(input.page);
  if (input.page !== undefined && input.page !== null && (sent === undefined || !Number.isInteger(sent) || sent < 1))
    return { ok: false, message: 'page must be a whole number of at least 1' };
  const pc = input.page_count === undefined || input.page_count === null ? undefined : num(input.page_count);
  if (pc !== undefined && (!Number.isInteger(pc) || pc < 1)) return { ok: false, message: 'page_count must be a whole number of at least 1' };
  const pages = pc ?? pageCount ?? undefined;
  let page = sent;
  if (page !== undefined && pages !== undefined && page > pages && clampPage) {
    healed.push(`page: ${page} is past the last page (${pages}); moved to the last page`);
    page = pages;
  }
  if (page !== undefined) {
    pos.page = page;
    if (pages !== undefined) pos.page_count = pages;
  }
  const raw = input.percentage ?? input.progress;
  let pct: number | undefined;
  if (raw !== undefined && raw !== null && raw !== '') {
    pct = num(raw);
    if (pct === undefined || pct < 0 || pct > 100) return { ok: false, message: M.percentageRange };
    if (pct > 1) {
      pct = pct / 100;
      healed.push('percentage: read as 0..100 and stored as a fraction');
    }
  }
  if (page !== undefined && pages !== undefined) {
    if (page > pages) return { ok: false, message: 'page must not be past page_count' };
    const fromPage = pages === 1 ? 1 : (page - 1) / (pages - 1);
    if (pct === undefined) pct = fromPage;
    else if (Math.abs(pct - fromPage) > 0.005) {
      healed.push(`percentage: ${round(pct)} disagreed with page ${page} of ${pages}; set from the page`);
      pct = fromPage;
    }
  }
  if (pct === undefined) return { ok: false, message: M.percentageRequired };
  pos.percentage = round(pct);

  const ctxText = str('context_text', 100_000);
  if (ctxText === null) return { ok: false, message: 'context_text must be text' };
  if (ctxText !== undefined) {
    const clean = ctxText.replace(/\s+/g, ' ').trim();
    const cut = clean.slice(0, CONTEXT_MAX);
    if (cut !== ctxText) healed.push(clean.length > CONTEXT_MAX ? `context_text: whitespace collapsed and cut to ${CONTEXT_MAX} characters` : 'context_text: whitespace collapsed');
    if (cut) pos.context_text = cut;
  }
  const cfiRaw = str('epubcfi', 4096);
  if (cfiRaw === null) return { ok: false, message: M.invalidEpubcfi };
  if (cfiRaw !== undefined) {
    // KOReader sends its XPointer in the epubcfi field: it is converted when the book's index is known
    if (cfiRaw.startsWith('/body/')) {
      pos.xpointer = cfiRaw;
    } else {
      const c = parseCfi(cfiRaw);
      if (!c) return { ok: false, message: M.invalidEpubcfi };
      pos.epubcfi = c.cfi;
      pos.spine_index = c.spineIndex;
      healed.push(...c.healed);
    }
  }
  const xp = str('xpointer', 4096);
  if (xp === null || (xp !== undefined && !xp.startsWith('/body/'))) return { ok: false, message: 'xpointer must start with /body/' };
  if (xp) pos.xpointer = xp;
  const href = str('anchor_href', 2048);
  if (href === null) return { ok: false, message: 'anchor_href must be text' };
  if (href) pos.anchor_href = href;
  const sel = str('css_selector', 2048);
  if (sel === null) return { ok: false, message: 'css_selector must be text' };
  if (sel) pos.css_selector = sel;
  if (input.char_offset !== undefined && input.char_offset !== null) {
    const o = num(input.char_offset);
    if (o === undefined || !Number.isInteger(o) || o < 0) return { ok: false, message: 'char_offset must be a whole number of at least 0' };
    pos.char_offset = o;
  }
  const force = input.force === true || input.force === 'true';
  return { ok: true, position: pos as Position, healed, force };
}

/** The guard: a first-page submission never overwrites a later position (unless forced). */
export const guardKeeps = (current: number | null, incoming: number, force: boolean): boolean => !force && current !== null && incoming <= FIRST_PAGE && current > FIRST_PAGE;

export interface Stored {
  percentage: number;
  device: string;
  version: number;
}

/** What a device was given of the current position: its version and place (a receipt, or the version a write names). */
export interface Given {
  version: number;
  percentage: number;
}

/**
 * When two devices disagree (docs/decisions.md, "Reading" and "Devices follow the position they
 * were given"): a device's first position for a book already mid-read elsewhere — unless it was
 * given the current position (its last receipt, or the version the write names, is the current
 * one) and does not push from a place more than 1 % before the one it was given — or a write based
 * on an older version than the one stored by another device.
 */
export function conflictReason(
  current: Stored | null,
  incoming: { percentage: number; device: string; baseVersion?: number },
  deviceKnown: boolean,
  received: Given | null = null,
): 'first-push' | 'concurrent' | null {
  if (!current || current.device === incoming.device) return null;
  if (Math.abs(current.percentage - incoming.percentage) <= AGREE) return null;
  const midRead = current.percentage > FIRST_PAGE && current.percentage < 1;
  if (!deviceKnown && midRead) {
    const given: Given | null =
      incoming.baseVersion !== undefined ? (incoming.baseVersion >= current.version ? { version: incoming.baseVersion, percentage: current.percentage } : null) : received;
    const follows = given !== null && given.version >= current.version && incoming.percentage >= given.percentage - AGREE;
    return follows ? null : 'first-push';
  }
  if (incoming.baseVersion !== undefined && incoming.baseVersion < current.version) return 'concurrent';
  return null;
}

/** a submitted percentage further than this from its position's is healed */
export const PERCENT_TOLERANCE = 0.02;

type Heal = L.Heal;

/**
 * Checks a reflowable position against the book's locator index: the strongest notation sent (an
 * XPointer, else the CFI, else the restore handles) gives the canonical position, healed where it
 * does not fit the book. Null when no notation places it (a percentage alone). The CFI is parsed
 * once; what was healed comes with its code, so a heal made moot is dropped by what it is.
 */
export function resolve(index: L.LocatorIndex, pos: Position): { at: L.Canonical | null; healed: Heal[] } {
  const healed: Heal[] = [];
  let found: L.Resolved | null = null;
  if (pos.xpointer) {
    found = L.xpointerToCanonical(index, pos.xpointer);
    if (!found) healed.push(L.heal('not-a-place', 'xpointer: not a place in this book; kept as sent'));
  } else if (pos.epubcfi) {
    const c = L.parseCfi(pos.epubcfi);
    found = c && L.cfiToCanonical(index, c);
    const fromHref = pos.anchor_href === undefined ? null : L.spineOfHref(index, pos.anchor_href);
    // a spine step without an idref of this book is stale when anchor_href names another document
    const named = c?.spineAssert !== undefined && index.spine.some((s) => s[0] === c.spineAssert);
    if (found && c && fromHref !== null && fromHref !== found.pos.spine && !named) {
      const step = (fromHref + 1) * 2;
      const { spineAssert: _, ...steps } = c;
      const moved = L.cfiToCanonical(index, { ...steps, spineStep: step });
      if (moved) {
        healed.push(L.heal('spine-href', `epubcfi: spine step ${c.spineStep} disagreed with anchor_href ${pos.anchor_href}; set to spine step ${step}`));
        found = { pos: moved.pos, healed: moved.healed.filter((h) => h.code !== 'spine-stale' && h.code !== 'spine-past-end') };
      }
    }
  } else if (pos.anchor_href) {
    found = L.restoreToCanonical(index, { anchor_href: pos.anchor_href, css_selector: pos.css_selector, char_offset: pos.char_offset });
    if (!found) {
      healed.push(L.heal('href-unknown', `anchor_href: ${pos.anchor_href} is not a document of this book; dropped with its css_selector and char_offset`));
      delete pos.anchor_href;
      delete pos.css_selector;
      delete pos.char_offset;
    }
  }
  return { at: found?.pos ?? null, healed: [...healed, ...(found?.healed ?? [])] };
}

/** A percentage healed to the position's when it disagrees by more than the tolerance. */
export function percentageAt(index: L.LocatorIndex, at: L.Canonical, sent: number | undefined): { percentage: number; healed: Heal[] } {
  const pct = round(L.canonicalToPercentage(index, at));
  if (sent === undefined || Math.abs(pct - sent) <= PERCENT_TOLERANCE) return { percentage: sent ?? pct, healed: [] };
  return { percentage: pct, healed: [L.heal('percentage', `percentage: ${sent} disagreed with the position (${pct}); set from the position`)] };
}

/** Sets every notation of `pos` from the canonical position; the percentage only when it disagrees. */
export function place(index: L.LocatorIndex, pos: Position, at: L.Canonical): Heal[] {
  pos.epubcfi = L.canonicalToCfi(index, at);
  pos.spine_index = at.spine;
  pos.doc_offset = at.offset;
  pos.xpointer = L.canonicalToXPointer(index, at);
  Object.assign(pos, L.canonicalToRestore(index, at));
  const p = percentageAt(index, at, pos.percentage);
  pos.percentage = p.percentage;
  return p.healed;
}

/** context_text this close (UTF-16 units) to the position confirms it */
export const CONTEXT_WINDOW = 300;
/** shorter context_text is too common to move a position by */
export const CONTEXT_MIN = 8;

/** Where the context text is to be looked for: the position if known, else where the percentage falls. */
export function contextHint(index: L.LocatorIndex, pos: Position, at: L.Canonical | null): L.Canonical | null {
  if (!pos.context_text || pos.context_text.length < CONTEXT_MIN) return null;
  return at ?? L.percentageToCanonical(index, pos.percentage);
}

/**
 * The context text was found at `found` (nearest the hint): a position far from it moves there, and
 * a position known by its percentage alone is placed there. Returns the position and why it changed.
 */
export function byContext(index: L.LocatorIndex, at: L.Canonical | null, found: L.Canonical): { at: L.Canonical; healed: Heal[] } {
  if (at && at.spine === found.spine && Math.abs(at.offset - found.offset) <= CONTEXT_WINDOW) return { at, healed: [] };
  const href = index.spine[found.spine]?.[1] ?? '';
  return {
    at: found,
    healed: [
      at
        ? L.heal('text-moved', `context_text: not found at the position; found in ${href} and moved there`)
        : L.heal('text-placed', `context_text: found in ${href}; the position was set from it`),
    ],
  };
}
