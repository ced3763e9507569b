// The static assets of the web app: htmx (from its npm package) and our own CSS and JS, each read
// and hashed once at start and served as /assets/<name>.<hash>.<ext>, cached for a year (a change
// is a new name). Our own files sit in src/assets (sources) or next to the bundle in web-assets/;
// the scripts written in TypeScript (src/browser, src/reader) are bundles (BUNDLES below). The
// stylesheet is one file per component in assets/css, joined at start in STYLESHEET's order (the
// cascade's order) into the one app.css a page loads.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  /** the URL path, /assets/<name>.<hash>.<ext> */
  path: string;
  type: string;
  body: Buffer;
}

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };

/** Where our own asset files are: src/assets (sources) or web-assets beside the bundle. */
export function ownDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const d of [join(here, 'assets'), join(here, 'web-assets')]) if (existsSync(join(d, 'css', STYLESHEET[0]))) return d;
  throw new Error(`the web app's assets are missing (looked in ${here}/assets and ${here}/web-assets)`);
}

/**
 * The stylesheet's parts in cascade order: the tokens (colours by theme, font, radii, spacing) first,
 * then the page's base and layout, forms, book grids and cards, the library, a book's pages, admin
 * and profile, the reader, uploading. A later part may override an earlier one, so the order is
 * declared here, not read from the folder.
 */
export const STYLESHEET = ['tokens.css', 'base.css', 'layout.css', 'forms.css', 'grid.css', 'library.css', 'book.css', 'admin.css', 'reader.css', 'upload.css'] as const;

/** The one stylesheet a page loads: the parts of assets/css joined in STYLESHEET's order. */
export function stylesheet(dir: string): Buffer {
  return Buffer.concat(STYLESHEET.map((f) => readFileSync(join(dir, 'css', f))));
}

function asset(name: string, file: string): Asset {
  return assetOf(name, readFileSync(file));
}

function assetOf(name: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  const ext = name.slice(name.lastIndexOf('.') + 1);
  return { path: `/assets/${name.slice(0, -ext.length - 1)}.${hash}.${ext}`, type: TYPES[ext] ?? 'application/octet-stream', body };
}

export interface Assets {
  css: string;
  js: string;
  /** editing books (issue 43): the cover upload and the library's selection and bulk bar */
  edit: string;
  /** uploading books (issue 43): its script, loaded for those who may upload (its styles are in app.css) */
  upload: string;
  /** reading offline (issue 45): registers the service worker, "Keep offline", the offline books page */
  offline: string;
  htmx: string;
  /**
   * the reader's bundle (src/reader/main.ts with foliate-js) and its boot script (src/reader/boot.ts,
   * loaded first: it asks for what the first page needs while the bundle loads): their paths, built
   * on first use when no bundle is on disk
   */
  reader: () => { script: string; boot: string };
  byPath: Map<string, Asset>;
}

/**
 * The scripts written in TypeScript, bundled by esbuild: the app's page script and the offline one
 * (classic deferred scripts: one function each, nothing global) and the reader (an ES module with
 * foliate-js, foliate's lazy imports inlined, and its boot script). The production build (embedded/build.mjs) writes them
 * to web-assets/ under these names with the same options; from the sources (development and tests)
 * they are bundled here, the page scripts at start and the reader on first use.
 */
export const BUNDLES = {
  'app.js': { entry: 'browser/app.ts', format: 'iife' },
  'offline.js': { entry: 'browser/offline.ts', format: 'iife' },
  'reader.js': { entry: 'reader/main.ts', format: 'esm' },
  'reader-boot.js': { entry: 'reader/boot.ts', format: 'esm' },
} as const;
export type BundleName = keyof typeof BUNDLES;

/** The options every bundle shares, here and in embedded/build.mjs. */
export const BUNDLE_OPTIONS = { bundle: true, splitting: false, minify: true, target: 'es2022', legalComments: 'eof', logLevel: 'warning' } as const;

/** Bundles one of BUNDLES from the sources (src/browser, src/reader) with esbuild's API. */
export function buildBundle(name: BundleName): Buffer {
  const { entry, format } = BUNDLES[name];
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({ ...BUNDLE_OPTIONS, format, entryPoints: [join(dirname(fileURLToPath(import.meta.url)), entry)], write: false });
  return Buffer.from(out.outputFiles[0]!.contents);
}

/** A bundle as built by embedded/build.mjs (beside the bundle), else bundled from the sources; once per process. */
const bundled = new Map<BundleName, Asset>();
function bundle(dir: string, name: BundleName): Asset {
  let a = bundled.get(name);
  if (!a) {
    const file = join(dir, name);
    a = existsSync(file) ? asset(name, file) : assetOf(name, buildBundle(name));
    bundled.set(name, a);
  }
  return a;
}

export function loadAssets(): Assets {
  const dir = ownDir();
  const htmxFile = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');
  const list = {
    css: assetOf('app.css', stylesheet(dir)),
    js: bundle(dir, 'app.js'),
    edit: asset('edit.js', join(dir, 'edit.js')),
    upload: asset('upload.js', join(dir, 'upload.js')),
    offline: bundle(dir, 'offline.js'),
    htmx: asset('htmx.js', htmxFile),
  };
  const byPath = new Map(Object.values(list).map((a) => [a.path, a]));
  let reader: { script: string; boot: string } | null = null;
  return {
    css: list.css.path,
    js: list.js.path,
    edit: list.edit.path,
    upload: list.upload.path,
    offline: list.offline.path,
    htmx: list.htmx.path,
    byPath,
    reader: () => {
      if (!reader) {
        const script = bundle(dir, 'reader.js');
        const boot = bundle(dir, 'reader-boot.js');
        for (const a of [script, boot]) byPath.set(a.path, a);
        reader = { script: script.path, boot: boot.path };
      }
      return reader;
    },
  };
}
