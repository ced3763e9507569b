// The part of foliate-js (an untyped JavaScript package) the reader uses, declared as the reader
// relies on it: the <foliate-view> element and its renderer, a book and its sections, the overlayer's
// drawings, the EPUB parser and the zip.js it vendors.

declare module 'foliate-js/view.js' {
  /** A section of a book: `load` gives the URL foliate shows in its frame (a blob: URL). */
  export interface Section {
    load?: () => Promise<string | null | undefined>;
    unload?: () => unknown;
    createDocument?: () => Promise<Document>;
  }
  export interface TocItem {
    label?: string;
    href: string;
    subitems?: TocItem[];
  }
  export interface Book {
    sections: Section[];
    toc?: TocItem[];
  }
  /** An annotation given to addAnnotation: `value` is its CFI. */
  export interface Annotation {
    value: string;
  }
  /** What foliate hands back of an annotation given to addAnnotation (the same object, whatever else it holds). */
  export interface DrawnAnnotation extends Annotation {
    readonly [field: string]: unknown;
  }
  export type Draw = (rects: DOMRectList, options?: { color?: string; width?: number }) => SVGElement;
  export interface SearchExcerpt {
    pre: string;
    match: string;
    post: string;
  }
  export interface SearchResult {
    label?: string;
    progress?: number;
    subitems?: { cfi: string; excerpt: SearchExcerpt }[];
  }
  export interface Relocation {
    index: number;
    range?: Range;
    fraction: number;
    reason?: string;
  }
  export interface ViewEvents {
    load: CustomEvent<{ doc: Document; index: number }>;
    'draw-annotation': CustomEvent<{ draw: (f: Draw, options?: { color?: string; width?: number }) => void; annotation: DrawnAnnotation }>;
    'create-overlay': CustomEvent<{ index: number }>;
    'show-annotation': CustomEvent<{ value: string; index: number; range: Range }>;
  }
  /** foliate's renderer (the paginator or the fixed layout): an element that moves within the book. */
  export interface Renderer extends HTMLElement {
    setStyles?: (css: string) => void;
    goTo: (target: { index: number; anchor?: number }) => Promise<void>;
    addEventListener(type: 'relocate', listener: (e: CustomEvent<Relocation>) => void): void;
    addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  }
  /** <foliate-view>, registered when this module loads. */
  export class View extends HTMLElement {
    book: Book;
    renderer: Renderer;
    lastLocation: { tocItem?: { label?: string } | null } | null;
    open(book: Book): Promise<void>;
    init(options: { lastLocation?: string; showTextStart?: boolean }): Promise<void>;
    getSectionFractions(): number[];
    getCFI(index: number, range: Range): string;
    resolveCFI(cfi: string): { index: number } | undefined;
    goTo(target: string): Promise<unknown>;
    goToFraction(fraction: number): Promise<void>;
    goLeft(): Promise<void>;
    goRight(): Promise<void>;
    addAnnotation(annotation: Annotation): Promise<unknown>;
    deleteAnnotation(annotation: Annotation): Promise<unknown>;
    search(options: { query: string }): AsyncGenerator<SearchResult | 'done', void, undefined>;
    clearSearch(): void;
    addEventListener<K extends keyof ViewEvents>(type: K, listener: (e: ViewEvents[K]) => void): void;
    addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  }
  /** A book from a file (EPUB, MOBI/AZW3, FB2, CBZ, PDF), by its content. */
  export function makeBook(file: File): Promise<Book>;
}

declare module 'foliate-js/overlayer.js' {
  import type { Draw } from 'foliate-js/view.js';
  /** the overlayer's drawings (a class's static methods: only these are used) */
  export const Overlayer: { highlight: Draw; underline: Draw };
}

declare module 'foliate-js/epub.js' {
  import type { Book } from 'foliate-js/view.js';
  /** What the EPUB parser reads the zip's entries with. */
  export interface Loader {
    entries: unknown[];
    loadText: (name: string) => Promise<string> | null;
    loadBlob: (name: string, type?: string) => Promise<Blob> | null;
    getSize: (name: string) => number;
  }
  export class EPUB {
    constructor(loader: Loader);
    init(): Promise<Book>;
  }
}

declare module 'foliate-js/vendor/zip.js' {
  /** zip.js's reader base class (not exported: BlobReader's parent), what a ZipReader reads from. */
  export class Reader {
    size: number;
    readUint8Array(offset: number, length: number): Promise<Uint8Array>;
  }
  export class BlobReader extends Reader {
    constructor(blob: Blob);
  }
  export class TextWriter {
    private text: true;
  }
  export class BlobWriter {
    private blob: true;
    constructor(type?: string);
  }
  export interface Entry {
    filename: string;
    uncompressedSize: number;
    /** where the entry's local header starts in the file */
    offset: number;
    compressedSize: number;
    getData(writer: TextWriter): Promise<string>;
    getData(writer: BlobWriter): Promise<Blob>;
  }
  export class ZipReader {
    constructor(reader: Reader);
    getEntries(): Promise<Entry[]>;
  }
  export function configure(options: { useWebWorkers?: boolean }): void;
}

interface HTMLElementTagNameMap {
  'foliate-view': import('foliate-js/view.js').View;
}
