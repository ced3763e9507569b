// KEPUBs and their span maps, from the catalog (which makes them from the files it owns and keeps
// them by the EPUB's SHA-256). Downloads stream the parts one after another (no span map: a download
// needs none, and making it costs the first download tens of milliseconds); span maps are kept in
// a bounded cache (one per book content: a changed file is a new SHA-256), and a Kobo Location maps
// through them to the canonical position — the document's href and the UTF-16 offset into its body
// text, which is what the reading service's restore handles (`anchor_href`, `css_selector: body`,
// `char_offset`) name exactly — and back.
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { Catalog } from '@bindery/contracts';
import type { CallCatalog } from '../http/rpc';

export type KepubDoc = Catalog.KepubDoc;
export type SpanMap = Catalog.SpanMap;
type Part = Catalog.KepubPart;

export function kepubSource(catalog: CallCatalog) {
  const maps = new LRUCache<string, SpanMap>({
    maxSize: 32 * 1024 * 1024,
    sizeCalculation: (m) =>
      Math.max(
        1,
        m.docs.reduce((s, d) => s + d.spans.length * 12 + 64, 0),
      ),
  });
  const part = async (sha256: string, n: number, spansOnly = false): Promise<Part | null> => {
    const r = await catalog('kepub', { sha256, part: n, ...(spansOnly ? { spans_only: true } : {}) });
    return r.ok ? r.value : null;
  };
  const remember = (sha256: string, p: Part) => {
    if (!('spans_gz' in p) || !p.spans_gz || maps.has(sha256)) return;
    try {
      maps.set(sha256, JSON.parse(gunzipSync(Buffer.from(p.spans_gz, 'base64')).toString('utf8')) as SpanMap);
    } catch {
      // a broken map: positions of this book travel as percentages
    }
  };

  /** The book's span map (made with its KEPUB on first use), or null when the catalog has none. */
  async function spans(sha256: string): Promise<SpanMap | null> {
    const hit = maps.get(sha256);
    if (hit) return hit;
    const p = await part(sha256, 0, true);
    if (p) remember(sha256, p);
    return maps.get(sha256) ?? null;
  }

  /** The KEPUB as a stream with its size, or null. */
  async function download(sha256: string): Promise<{ size: number; stream: Readable } | null> {
    const first = await part(sha256, 0);
    if (!first || !('data' in first) || !first.data) return null;
    let next = 1;
    const stream = new Readable({
      read() {
        if (next >= first.parts) {
          this.push(null);
          return;
        }
        const n = next++;
        part(sha256, n).then(
          (p) => (p && 'data' in p && p.data ? this.push(Buffer.from(p.data, 'base64')) : this.destroy(new Error(`KEPUB part ${n} missing`))),
          (e) => this.destroy(e as Error),
        );
      },
    });
    stream.push(Buffer.from(first.data, 'base64'));
    return { size: first.size, stream };
  }

  return { spans, download };
}

export type KepubSource = ReturnType<typeof kepubSource>;

const norm = (p: string) => {
  let s = p.split('#')[0]!.replace(/^\.?\//, '');
  try {
    s = decodeURIComponent(s);
  } catch {
    // as written
  }
  return s.normalize('NFC');
};

/** The spine index a Kobo `Source` names (the archive path, or an href, or either's end). */
export function docOfSource(map: SpanMap, source: string): number | null {
  const want = norm(source);
  if (!want) return null;
  let i = map.docs.findIndex((d) => norm(d.path) === want || norm(d.href) === want);
  if (i < 0) i = map.docs.findIndex((d) => norm(d.path).endsWith(`/${want}`) || want.endsWith(`/${norm(d.path)}`));
  return i < 0 ? null : i;
}

/** A Kobo Location (span id in a file) → the canonical place, as restore handles for the reading service. */
export function locationToPlace(map: SpanMap, source: string, span: string): { spine: number; offset: number; anchor_href: string } | null {
  const spine = docOfSource(map, source);
  if (spine === null) return null;
  const d = map.docs[spine]!;
  for (let j = 0; j < d.spans.length; j += 2) if (d.spans[j] === span) return { spine, offset: d.spans[j + 1] as number, anchor_href: d.href };
  return null;
}

/** The canonical place → the span that holds it (the last starting at or before it) in its file. */
export function placeToLocation(map: SpanMap, spine: number, offset: number): { Source: string; Value: string; Type: 'KoboSpan' } | null {
  // a place in a document without spans (a picture page) goes to the next one that has some
  for (let s = Math.max(0, spine); s < map.docs.length; s++) {
    const d = map.docs[s]!;
    if (d.spans.length === 0) continue;
    let best = d.spans[0] as string;
    if (s === spine) for (let j = 0; j < d.spans.length && (d.spans[j + 1] as number) <= offset; j += 2) best = d.spans[j] as string;
    return { Source: d.path, Value: best, Type: 'KoboSpan' };
  }
  return null;
}

/** A share of the book (0..1) → its canonical place, weighing documents by text length as the locator index does. */
export function fractionToPlace(map: SpanMap, fraction: number): { spine: number; offset: number } {
  const w = map.docs.map((d) => Math.max(d.n, 1));
  const total = w.reduce((a, b) => a + b, 0);
  let want = Math.min(1, Math.max(0, fraction)) * total;
  for (let i = 0; i < w.length; i++) {
    if (want < w[i]! || i === w.length - 1) return { spine: i, offset: Math.min(map.docs[i]!.n, Math.round((Math.min(want, w[i]!) / w[i]!) * map.docs[i]!.n)) };
    want -= w[i]!;
  }
  return { spine: 0, offset: 0 };
}
