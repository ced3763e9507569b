// better-sqlite3 against sql.js reading a calibre metadata.db: open, then every book with its fields
// (the tables services/catalog/src/calibre reads, joined in JavaScript the same way), RSS after and
// the process's peak, and the CPU time of open and read (steadier than wall time on a busy machine). Each engine runs in a fresh process, rounds alternate, medians are printed.
// Neither package need be a dependency: run it from a scratch folder holding both, e.g.
//   mkdir /tmp/readers && cd /tmp/readers && echo '{"pnpm":{"onlyBuiltDependencies":["better-sqlite3"]}}' > package.json
//   pnpm add better-sqlite3@12.11.1 sql.js@1.17.0
//   node <repo>/test/bench/calibre-readers.mjs <library>/metadata.db 5
// (docs/benchmarks.md, "calibre metadata.db readers"; the database from calibre-fill.py)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.cwd(), 'noop.js'));
const Q = {
  books: 'SELECT id, title, sort, timestamp, pubdate, series_index, author_sort, path, uuid, has_cover, last_modified FROM books',
  authors: 'SELECT l.book, a.name, a.sort FROM books_authors_link l JOIN authors a ON a.id = l.author ORDER BY l.id',
  series: 'SELECT l.book, s.name FROM books_series_link l JOIN series s ON s.id = l.series',
  tags: 'SELECT l.book, t.name FROM books_tags_link l JOIN tags t ON t.id = l.tag ORDER BY l.id',
  publishers: 'SELECT l.book, p.name FROM books_publishers_link l JOIN publishers p ON p.id = l.publisher',
  languages: 'SELECT l.book, g.lang_code FROM books_languages_link l JOIN languages g ON g.id = l.lang_code ORDER BY l.item_order, l.id',
  identifiers: 'SELECT book, type, val FROM identifiers ORDER BY id',
  comments: 'SELECT book, text FROM comments',
  ratings: 'SELECT l.book, r.rating FROM books_ratings_link l JOIN ratings r ON r.id = l.rating',
  data: 'SELECT book, format, name, uncompressed_size FROM data ORDER BY id',
  cc1: 'SELECT book, value FROM custom_column_1',
  cc2: 'SELECT l.book, v.value FROM books_custom_column_2_link l JOIN custom_column_2 v ON v.id = l.value',
  cc3: 'SELECT l.book, v.value FROM books_custom_column_3_link l JOIN custom_column_3 v ON v.id = l.value ORDER BY l.id',
};

function assemble(all) {
  const books = new Map();
  for (const b of all('books')) books.set(b.id, { ...b, authors: [], tags: [], languages: [], identifiers: {}, formats: [], custom: {} });
  const on = (k, f) => {
    for (const r of all(k)) {
      const b = books.get(r.book);
      if (b) f(b, r);
    }
  };
  on('authors', (b, r) => b.authors.push({ name: r.name, sort: r.sort }));
  on('series', (b, r) => (b.series = r.name));
  on('tags', (b, r) => b.tags.push(r.name));
  on('publishers', (b, r) => (b.publisher = r.name));
  on('languages', (b, r) => b.languages.push(r.lang_code));
  on('identifiers', (b, r) => (b.identifiers[r.type] = r.val));
  on('comments', (b, r) => (b.comments = r.text));
  on('ratings', (b, r) => (b.rating = r.rating));
  on('data', (b, r) => b.formats.push(`${b.path}/${r.name}.${r.format.toLowerCase()}`));
  for (const k of ['cc1', 'cc2', 'cc3']) on(k, (b, r) => (b.custom[k] ??= []).push(r.value));
  return books;
}

async function one(engine, file) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let opened;
  let books;
  if (engine === 'better-sqlite3') {
    const Database = require('better-sqlite3');
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 50 });
    opened = performance.now();
    db.exec('BEGIN');
    books = assemble((k) => db.prepare(Q[k]).all());
    db.exec('COMMIT');
    db.close();
  } else {
    const initSqlJs = require('sql.js');
    const SQL = await initSqlJs();
    const db = new SQL.Database(readFileSync(file));
    opened = performance.now();
    books = assemble((k) => {
      const s = db.prepare(Q[k]);
      const out = [];
      while (s.step()) out.push(s.getAsObject());
      s.free();
      return out;
    });
    db.close();
  }
  const read = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const rss = process.memoryUsage().rss;
  const peak = Number(/VmHWM:\s+(\d+)/u.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
  return {
    engine,
    books: books.size,
    openMs: opened - t0,
    readMs: read - opened,
    totalMs: read - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssMiB: rss / 2 ** 20,
    peakMiB: peak / 2 ** 20,
  };
}

const [a, b, c] = process.argv.slice(2);
if (a === '--one') {
  console.log(JSON.stringify(await one(b, c)));
} else {
  const rounds = Number(b ?? 5);
  const runs = { 'better-sqlite3': [], 'sql.js': [] };
  for (let i = 0; i < rounds; i++) {
    for (const engine of Object.keys(runs)) {
      runs[engine].push(JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--one', engine, a], { encoding: 'utf8' })));
    }
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (const [engine, rs] of Object.entries(runs)) {
    const m = (k) => median(rs.map((r) => r[k])).toFixed(1);
    console.log(
      `${engine}: ${rs[0].books} books, open ${m('openMs')} ms, read ${m('readMs')} ms, total ${m('totalMs')} ms (CPU ${m('cpuMs')} ms), RSS ${m('rssMiB')} MiB, peak ${m('peakMiB')} MiB (median of ${rs.length})`,
    );
  }
}
