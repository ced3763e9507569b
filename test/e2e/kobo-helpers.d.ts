import type { Call } from './helpers';
import type { Res } from '../support/http';
/** A zip of stored (uncompressed) entries, in order: EPUBs put `mimetype` first, uncompressed. */
export declare function storedZip(entries: [string, string | Buffer][]): Buffer;
/** A small valid EPUB 3 with a title, an author and a few sentences. */
export declare function smallEpub(title: string, author: string, uid: string, text?: string): Buffer;
/** The entries of a ZIP (stored or deflated), by name. */
/** An EPUB of about `bytes` of text in `chapters` chapters of many paragraphs (the benchmarks' big book). */
export declare function bigEpub(bytes: number, chapters?: number): Buffer;
export declare function unzip(zip: Buffer): Map<string, Buffer>;
/** Every KoboSpan of a KEPUB: file, span id, the span's text. */
export declare function koboSpans(kepub: Buffer): {
    source: string;
    id: string;
    text: string;
}[];
/** What a Kobo Libra 2 sends as its user agent (Qt WebKit with the store's client name). */
export declare const KOBO_UA = "Mozilla/5.0 (Linux; U; Android 2.0; en-us;) AppleWebKit/538.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/538.1 (Kobo Touch 0387/4.38.21908)";
export interface SyncRun {
    pages: Res[];
    entries: Record<string, any>[];
    token: string;
}
/** Syncs as the device does: pages while the answer says continue, each with the last token. */
export declare function koboSync(call: Call, base: string, token: string | null): Promise<SyncRun>;
/** The book id of a sync entry, whatever its kind. */
export declare function entryBook(e: Record<string, any>): {
    kind: string;
    id: string;
    removed?: boolean;
} | null;
