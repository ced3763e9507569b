// The static assets of the web app: htmx (from its npm package) and our own CSS and JS, each read
// and hashed once at start and served as /assets/<name>.<hash>.<ext>, cached for a year (a change
// is a new name). Our own files sit in src/assets (sources) or next to the bundle in web-assets/.
// The stylesheet is one file per component in assets/css, joined at start in STYLESHEET's order
// (the cascade's order) into the one app.css a page loads.
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
  /** the reader's bundle (src/reader/main.js with foliate-js): its path, built on first use when no bundle is on disk */
  reader: () => string;
  byPath: Map<string, Asset>;
}

/**
 * The reader's bundle: web-assets/reader.js in the production build (embedded/build.mjs), else built
 * here from src/reader/main.js with esbuild's API (the sources' path: development and tests).
 */
export function buildReader(): Buffer {
  const entry = join(dirname(fileURLToPath(import.meta.url)), 'reader', 'main.js');
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({ ...READER_BUILD, entryPoints: [entry], write: false });
  return Buffer.from(out.outputFiles[0]!.contents);
}

/** How the reader is bundled, here and in embedded/build.mjs: one ES module, foliate's lazy imports inlined. */
export const READER_BUILD = { bundle: true, format: 'esm', splitting: false, minify: true, target: 'es2022', legalComments: 'eof', logLevel: 'warning' } as const;

export function loadAssets(): Assets {
  const dir = ownDir();
  const htmxFile = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');
  const list = {
    css: assetOf('app.css', stylesheet(dir)),
    js: asset('app.js', join(dir, 'app.js')),
    edit: asset('edit.js', join(dir, 'edit.js')),
    upload: asset('upload.js', join(dir, 'upload.js')),
    offline: asset('offline.js', join(dir, 'offline.js')),
    htmx: asset('htmx.js', htmxFile),
  };
  const byPath = new Map(Object.values(list).map((a) => [a.path, a]));
  let reader: Asset | null = null;
  const bundled = join(dir, 'reader.js');
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
        reader = existsSync(bundled) ? asset('reader.js', bundled) : assetOf('reader.js', buildReader());
        byPath.set(reader.path, reader);
      }
      return reader.path;
    },
  };
}
