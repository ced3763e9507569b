// The production output: embedded/src/main.ts and service.ts bundled with the workspace packages
// into embedded/dist/*.js. The pure-JavaScript packages of INLINE are bundled too (with what they
// import): loading hundreds of small ESM/CJS files cost more start time than anything else Bindery
// does on a restart. Every other package stays an import, resolved at run time from this package's
// own dependencies (the image installs exactly those, production only).
//   node embedded/build.mjs              build
//   node embedded/build.mjs --if-stale   build only when an input is newer than the output
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const here = import.meta.dirname;
const root = join(here, '..');
const out = join(here, 'dist');
const stamp = join(out, '.inputs.json');
// the workspace's packages (pnpm-workspace.yaml: `- dir` or `- dir/*`), but not the tests
const WORKSPACE = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
  .split('\n')
  .map((l) => l.match(/^\s*-\s*['"]?([^'"\s]+)/)?.[1])
  .filter((p) => p && p !== 'test')
  .flatMap((p) => (p.endsWith('/*') ? readdirSync(join(root, p.slice(0, -2))).map((d) => `${p.slice(0, -2)}/${d}`) : [p]))
  .filter((p) => existsSync(join(root, p, 'package.json')));
// render-worker: the child process that decodes page pictures (services/gateway/src/opds/render-child.ts)
// book-worker: the catalog's book thread: scan reads, KEPUB conversion (services/catalog/src/formats/book-thread.ts)
// private-tree-worker: the start's walk of the whole data directory (platform/src/private-tree.ts)
const ENTRIES = ['main', 'service', 'render-worker', 'book-worker', 'private-tree-worker'];
// Bundled: plain JavaScript, no native addon, wasm or file read next to its own module. Packages that
// load files or workers by path (pglite, sharp, argon2, unrar, unpdf, pino's transports), the
// optional-only one (pg: distributed mode, loaded when used) stay imports.
const INLINE = new Set([
  'typebox',
  '@fastify/type-provider-typebox',
  'fastify',
  '@fastify/cookie',
  '@fastify/formbody',
  '@fastify/rate-limit',
  '@fastify/websocket',
  'kysely',
  'xmlbuilder2',
  'fast-xml-parser',
  'jose',
  'lru-cache',
  'mime',
  'p-limit',
  'prom-client',
  'yauzl',
  'yazl',
  'chokidar',
  '@nats-io/nats-core',
  '@nats-io/transport-node',
  '@nats-io/jetstream',
  '@nats-io/services',
  'preact',
  'preact-render-to-string',
]);
const inNodeModules = (file) => file.includes(`${'/'}node_modules${'/'}`);

function newestInput() {
  let newest = 0;
  const walk = (dir) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const pkg of WORKSPACE) {
    const src = join(root, pkg, 'src');
    if (existsSync(src)) walk(src);
    newest = Math.max(newest, statSync(join(root, pkg, 'package.json')).mtimeMs);
  }
  newest = Math.max(newest, statSync(join(here, 'build.mjs')).mtimeMs, statSync(join(root, 'pnpm-lock.yaml')).mtimeMs);
  return newest;
}

function isFresh() {
  if (!existsSync(stamp) || ENTRIES.some((e) => !existsSync(join(out, `${e}.js`)))) return false;
  // A file added or removed changes the set of inputs without touching a newer mtime.
  const { builtAt, inputs } = JSON.parse(readFileSync(stamp, 'utf8'));
  if (inputs.some((f) => !existsSync(join(root, f)))) return false; // workspace files only (see below)
  return newestInput() <= builtAt;
}

if (process.argv.includes('--if-stale') && isFresh()) process.exit(0);
const { build } = await import('esbuild'); // only when building: a fresh start does not load it

const started = Date.now();
const own = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const externals = new Map();
const inlined = new Map();
const externalise = {
  name: 'bindery-externals',
  setup(b) {
    // Workspace packages (@bindery/*), relative imports, the INLINE packages and everything those
    // import are bundled; every other bare import stays one.
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@bindery/') || args.path.startsWith('node:')) return undefined;
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      if (INLINE.has(name)) {
        inlined.set(name, args.importer);
        return undefined;
      }
      if (inNodeModules(args.importer) && args.path !== '@electric-sql/pglite' && !args.path.startsWith('@electric-sql/pglite/')) return undefined;
      externals.set(name, args.importer);
      return { path: args.path, external: true };
    });
  },
};

rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, join(here, 'src', `${e}.ts`)])),
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  plugins: [externalise],
  // bundled CommonJS code requires node's modules: give it a `require`
  banner: {
    js: "// Built by embedded/build.mjs from the TypeScript sources; do not edit.\nimport { createRequire as __bindery_createRequire } from 'node:module';\nconst require = __bindery_createRequire(import.meta.url);",
  },
});

// Each external must be a dependency of @bindery/embedded at the version the importing package pins,
// or the image (which installs only these) would lack it or carry another version.
const problems = [];
for (const [name, importer] of [...externals, ...inlined]) {
  if (name.startsWith('@types/')) continue;
  const pkgDir = findPackageDir(importer);
  const declared = pkgDir ? readDeps(pkgDir)[name] : undefined;
  const mine = own.dependencies?.[name];
  if (!mine) problems.push(`${name} (imported by ${relative(root, importer)}) is not in embedded/package.json "dependencies"${declared ? `: add "${name}": "${declared}"` : ''}`);
  else if (declared && declared !== mine) problems.push(`${name}: ${relative(root, pkgDir)} pins ${declared}, embedded/package.json pins ${mine}`);
}
if (problems.length) {
  rmSync(out, { recursive: true, force: true });
  console.error(`build failed:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}

// the workspace's files: a bundled package changes with pnpm-lock.yaml, which the staleness check reads
const inputs = Object.keys(result.metafile.inputs)
  .filter((f) => !inNodeModules(`/${f}`))
  .map((f) => relative(root, join(process.cwd(), f)));
// the web app's own CSS and JS, read (and hashed) at start from next to the bundle
cpSync(join(root, 'web/src/assets'), join(out, 'web-assets'), { recursive: true });
// the scripts written in TypeScript (web/src/assets.ts, BUNDLES, with the same options as there):
// the page scripts app.js and offline.js (classic scripts, one function each) and the web reader
// (web/src/reader/main.ts with foliate-js, one ES module served only on the reader page, and its
// boot script web/src/reader/boot.ts)
const BUNDLES = {
  'app.js': ['browser/app.ts', 'iife'],
  'offline.js': ['browser/offline.ts', 'iife'],
  'reader.js': ['reader/main.ts', 'esm'],
  'reader-boot.js': ['reader/boot.ts', 'esm'],
};
for (const [name, [entry, format]] of Object.entries(BUNDLES)) {
  await build({
    entryPoints: [join(root, 'web/src', entry)],
    outfile: join(out, 'web-assets', name),
    bundle: true,
    format,
    splitting: false,
    minify: true,
    target: 'es2022',
    legalComments: 'eof',
    logLevel: 'warning',
  });
}
// a new embedded database's data directory, made once here (initdb and pg_trgm) and unpacked by a
// first start instead of running initdb (platform/src/db.ts, initdbApart)
execFileSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `const [pglite, trgm, file] = process.argv.slice(1);
const { PGlite } = await import(pglite);
const { pg_trgm } = await import(trgm);
const db = await PGlite.create({ extensions: { pg_trgm } });
await db.exec('create extension if not exists pg_trgm');
const tar = await db.dumpDataDir('gzip');
(await import('node:fs')).writeFileSync(file, Buffer.from(await tar.arrayBuffer()));
await db.close();`,
    import.meta.resolve('@electric-sql/pglite'),
    import.meta.resolve('@electric-sql/pglite/contrib/pg_trgm'),
    join(out, 'pgdata.tar.gz'),
  ],
  { stdio: 'inherit' },
);
writeFileSync(stamp, JSON.stringify({ builtAt: started, inputs, externals: [...externals.keys()].sort() }, null, 1));
console.error(`built embedded/dist (${ENTRIES.join(', ')}) in ${Date.now() - started} ms`);

function findPackageDir(file) {
  for (let d = dirname(file); d !== dirname(d); d = dirname(d)) if (existsSync(join(d, 'package.json'))) return d;
  return null;
}
function readDeps(dir) {
  const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return { ...p.dependencies, ...p.devDependencies };
}
