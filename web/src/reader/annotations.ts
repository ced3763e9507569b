// Highlights and notes in the reader. Text selected in the book becomes the reading service's
// annotation (POST /api/media-items/<id>/highlights or /notes with the selection's CFI range and its
// text); the service places it and derives KOReader's XPointers. The user's annotations (those made
// on KOReader too, for which the service gives a CFI) are drawn with foliate's overlayer, listed in
// the "Notes" panel, and can be deleted from it. Every text from the API is shown as text. Each new
// one carries a dedup_key made here, so a write repeated (sent again after the network came back)
// answers the one already made; without a network a kept book's annotations come from this browser
// and new ones wait in the outbox (store.ts).
import { Overlayer } from 'foliate-js/overlayer.js';
import type { View } from 'foliate-js/view.js';
import type { AnnotationRecord } from '../browser/offline-db';
import { byId } from './dom';
import { call, failure } from './http';
import { t } from './messages';
import { type KeptBook, queue, updateKept, waiting } from './store';

type Kind = 'highlight' | 'note';
type Segment = 'highlights' | 'notes';
const KINDS: [Segment, Kind][] = [
  ['highlights', 'highlight'],
  ['notes', 'note'],
];
const SWATCH: Record<string, string> = {
  '#e0af68': 'yellow',
  '#f7768e': 'red',
  '#ff9e64': 'orange',
  '#9ece6a': 'green',
  '#7dcfff': 'cyan',
  '#7aa2f7': 'blue',
  '#bb9af7': 'purple',
  '#a9b1d6': 'gray',
};
const DEFAULT_COLOUR = '#e0af68';
const short = (s: string, n = 60) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

const isText = (n: Node): n is Text => n.nodeType === 3;

/** A range without the white space at its ends (within its text nodes). */
function trimmed(range: Range): Range {
  const r = range.cloneRange();
  const ws = /\s/;
  if (isText(r.startContainer)) {
    const t = r.startContainer.data;
    let i = r.startOffset;
    while (i < t.length && ws.test(t.charAt(i)) && (r.startContainer !== r.endContainer || i < r.endOffset)) i++;
    r.setStart(r.startContainer, i);
  }
  if (isText(r.endContainer)) {
    const t = r.endContainer.data;
    let i = r.endOffset;
    while (i > 0 && ws.test(t.charAt(i - 1)) && (r.startContainer !== r.endContainer || i > r.startOffset)) i--;
    r.setEnd(r.endContainer, i);
  }
  return r;
}

/** An annotation shown in the book and the panel: the record as the API gave it, its CFI (`value`) and its section. */
interface Mark {
  id: string;
  kind: Kind;
  value: string;
  index: number | undefined;
  color: string;
  percentage: number;
  text: string;
  note: string;
}

export interface Annotations {
  /** a section's document laid out: its selections become the toolbar's */
  onLoad: (doc: Document, index: number) => void;
  load: () => Promise<void>;
  /** an annotation was just tapped (the tap is not a page turn) */
  hit: () => boolean;
}

interface Options {
  view: View;
  item: string;
  root: HTMLElement;
  say: (s: string) => void;
  go: (target: string) => Promise<unknown>;
  kept?: KeptBook | null;
}

export function annotations({ view, item, root, say, go, kept = null }: Options): Annotations {
  /** by id */
  const all = new Map<string, Mark>();
  const list = byId('notes-list');
  const status = byId('notes-status');
  const menu = byId('notes-menu', HTMLDetailsElement);
  const bar = byId('selection');
  const form = byId('note-form', HTMLFormElement);
  const noteText = byId('note-text', HTMLTextAreaElement);
  let selected: { doc: Document; index: number; range: Range; text: string } | null = null;
  let shownAt = 0;

  const sectionOf = (cfi: string) => {
    try {
      return view.resolveCFI(cfi)?.index;
    } catch {
      return undefined;
    }
  };
  const entryOf = (id: string) => list.querySelector<HTMLElement>(`li[data-id="${CSS.escape(id)}"]`);
  const count = () => {
    const n = all.size;
    status.textContent = n ? t('reader.notes.count', { n }) : t('reader.notes.none');
    root.dataset.annotations = String(n);
  };

  view.addEventListener('draw-annotation', (e) => {
    const { draw, annotation } = e.detail;
    draw(annotation.kind === 'note' ? Overlayer.underline : Overlayer.highlight, { color: typeof annotation.color === 'string' ? annotation.color : undefined, width: 2 });
    const li = entryOf(String(annotation.id));
    if (li) li.dataset.drawn = 'true';
  });
  // a section laid out: draw its annotations on its overlayer
  view.addEventListener('create-overlay', (e) => {
    for (const a of all.values()) if (a.index === e.detail.index) void view.addAnnotation(a);
  });
  // an annotation tapped in the book: its entry in the panel
  view.addEventListener('show-annotation', (e) => {
    shownAt = Date.now();
    const a = [...all.values()].find((x) => x.value === e.detail.value);
    if (!a) return;
    menu.open = true;
    entryOf(a.id)?.querySelector('a')?.focus();
  });

  /** Adds a record from the API: to the map, the panel (in book order) and the book. */
  function add(rec: AnnotationRecord, kind: Kind) {
    const cfi = rec.position?.epubcfi;
    const a: Mark = {
      id: rec.id,
      kind,
      value: typeof cfi === 'string' ? cfi : '',
      index: typeof cfi === 'string' ? sectionOf(cfi) : undefined,
      color: rec.color || DEFAULT_COLOUR,
      percentage: typeof rec.position?.percentage === 'number' ? rec.position.percentage : 2,
      text: rec.text ?? '',
      note: rec.note ?? '',
    };
    all.set(a.id, a);
    const li = document.createElement('li');
    li.dataset.id = a.id;
    li.dataset.kind = kind;
    const swatch = document.createElement('span');
    swatch.className = `swatch swatch-${SWATCH[a.color.toLowerCase()] ?? 'other'}`;
    swatch.setAttribute('aria-hidden', 'true');
    const quote = document.createElement('blockquote');
    quote.className = 'annotation-text';
    quote.textContent = a.text;
    li.append(swatch, quote);
    if (a.note) {
      const p = document.createElement('p');
      p.className = 'annotation-note';
      p.textContent = a.note;
      li.append(p);
    }
    const actions = document.createElement('div');
    actions.className = 'reader-note-actions';
    if (a.value && a.index !== undefined) {
      const to = document.createElement('a');
      to.href = '#';
      to.textContent = t('reader.notes.goTo');
      to.setAttribute('aria-label', t('reader.notes.goToLabel', { kind, text: short(a.text) }));
      to.addEventListener('click', (e) => {
        e.preventDefault();
        menu.open = false;
        void go(a.value);
      });
      actions.append(to);
    }
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = t('reader.notes.delete');
    del.setAttribute('aria-label', t('reader.notes.deleteLabel', { kind, text: short(a.text) }));
    del.addEventListener('click', () => void remove(a));
    actions.append(del);
    li.append(actions);
    const after = [...list.querySelectorAll<HTMLElement>(':scope > li')].find((x) => (all.get(x.dataset.id ?? '')?.percentage ?? 2) > a.percentage);
    list.insertBefore(li, after ?? null);
    if (a.value && a.index !== undefined) void view.addAnnotation(a);
    count();
  }

  async function remove(a: Mark) {
    const r = await call('DELETE', `/api/${a.kind}s/${encodeURIComponent(a.id)}`);
    if (!r.ok) return say(t('reader.notes.deleteFailed', { kind: a.kind, reason: failure(r) }));
    all.delete(a.id);
    if (a.value && a.index !== undefined) void view.deleteAnnotation(a);
    const li = entryOf(a.id);
    const next = li?.nextElementSibling ?? li?.previousElementSibling;
    li?.remove();
    count();
    say(t('reader.notes.deleted', { kind: a.kind }));
    (next?.querySelector<HTMLElement>('a, button') ?? menu.querySelector('summary'))?.focus();
  }

  async function load() {
    const got: Record<Segment, AnnotationRecord[]> = { highlights: [], notes: [] };
    for (const [segment] of KINDS) {
      const r = await call<{ data?: AnnotationRecord[] }>('GET', `/api/media-items/${encodeURIComponent(item)}/${segment}`);
      if (r.status === 0 && kept?.annotations) {
        // offline: the kept book's, and those made here that wait for the network
        for (const [seg, kind] of KINDS) for (const rec of kept.annotations[seg] ?? []) add(rec, kind);
        for (const w of await waiting()) if (w.item === item && w.record && w.kind) add(w.record, w.kind);
        count();
        root.dataset.annotationsLoaded = 'true';
        return;
      }
      if (!r.ok) {
        status.textContent = t('reader.notes.readFailed', { reason: failure(r) });
        return;
      }
      got[segment] = r.body?.data ?? [];
    }
    for (const [segment, kind] of KINDS) for (const rec of got[segment]) add(rec, kind);
    if (kept) void updateKept(item, (k) => ({ ...k, annotations: got }));
    count();
    root.dataset.annotationsLoaded = 'true';
  }

  // the selection: a toolbar to highlight it or write a note on it
  const hideBar = () => {
    bar.hidden = true;
    form.hidden = true;
    selected = null;
  };
  function onLoad(doc: Document, index: number) {
    let timer = 0;
    doc.addEventListener('selectionchange', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const sel = doc.getSelection();
        if (!sel || sel.isCollapsed || !sel.rangeCount) {
          if (selected?.doc === doc && form.hidden) hideBar();
          return;
        }
        const range = trimmed(sel.getRangeAt(0));
        const text = range.toString();
        if (!text.trim()) return;
        selected = { doc, index, range, text };
        // the toolbar over the half of the book the selection is not in
        const frame = doc.defaultView?.frameElement;
        const box = byId('book-view').getBoundingClientRect();
        const y = (frame ? frame.getBoundingClientRect().top : 0) + range.getBoundingClientRect().top;
        bar.classList.toggle('at-bottom', y < box.top + box.height / 2);
        bar.hidden = false;
        root.dataset.selection = text;
      }, 150);
    });
  }

  async function create(kind: Kind, extra: { color?: string; note?: string }) {
    if (!selected) return;
    const s = selected;
    const cfi = view.getCFI(s.index, s.range);
    const url = `/api/media-items/${encodeURIComponent(item)}/${kind}s`;
    const body = { position: { epubcfi: cfi }, text: s.text, ...extra, dedup_key: `web-${crypto.randomUUID()}` };
    const r = await call<AnnotationRecord>('POST', url, body);
    if (r.status === 0 && kept) {
      // no network: kept here and sent when it is back; its dedup_key makes a second sending harmless
      const record: AnnotationRecord = {
        id: body.dedup_key,
        position: body.position,
        text: s.text,
        note: extra.note ?? '',
        color: Object.keys(SWATCH).find((h) => SWATCH[h] === extra.color) ?? null,
      };
      await queue({ key: `annotation:${body.dedup_key}`, method: 'POST', url, body, item, kind, record });
      s.doc.getSelection()?.removeAllRanges();
      hideBar();
      add(record, kind);
      root.dataset.pending = String(Number(root.dataset.pending || '0') + 1);
      return say(t('reader.notes.keptHere', { kind }));
    }
    if (!r.ok) return say(t('reader.notes.saveFailed', { kind, reason: failure(r) }));
    s.doc.getSelection()?.removeAllRanges();
    hideBar();
    if (r.body && !all.has(r.body.id)) add(r.body, kind);
    say(t('reader.notes.saved', { kind }));
  }

  for (const b of bar.querySelectorAll<HTMLElement>('button[data-colour]')) b.addEventListener('click', () => void create('highlight', { color: b.dataset.colour }));
  byId('selection-note').addEventListener('click', () => {
    form.hidden = false;
    noteText.focus();
  });
  byId('note-cancel').addEventListener('click', () => {
    form.hidden = true;
    noteText.value = '';
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const note = noteText.value;
    if (!note.trim()) return;
    void create('note', { note }).then(() => {
      if (form.hidden) noteText.value = '';
    });
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !bar.hidden) {
      selected?.doc.getSelection()?.removeAllRanges();
      hideBar();
    }
  });

  return { onLoad, load, hit: () => Date.now() - shownAt < 300 };
}
