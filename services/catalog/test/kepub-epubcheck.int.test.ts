// KEPUBs checked by EPUBCheck (Debian's `epubcheck`, run when installed; else skipped with the reason
// — kepub.int.test.ts keeps the structural check for every book): for a few books of the corpus, the
// KEPUB has no EPUBCheck message (fatal, error or warning) that its source does not already have.
// EPUBCheck is a JVM program taking seconds a book, so the sample is small.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertToKepub } from '../src/formats/kepub';

const JAR = '/usr/share/java/epubcheck.jar';
const missing = existsSync(JAR) ? null : `${JAR} is absent (apt-get install epubcheck)`;
const CORPUS = join(import.meta.dirname, '../../../test/fixtures/corpus40');
const SAMPLE = [
  'J. R. Hartley/The Hidden Crown (1864).epub',
  'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub',
  'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub',
  'languages/ja/田中 春樹 - 鉄の川と猫.epub',
];

/** a short-lived JVM: the first compiler tier and the serial collector take half the CPU of the defaults */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xshare:auto'];

/** EPUBCheck's message codes for a file (e.g. `ERROR(RSC-005)`), without their places. */
function messages(file: string): Set<string> {
  let out: string;
  try {
    out = execFileSync('java', [...JVM_FLAGS, '-jar', JAR, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string };
    out = `${x.stdout ?? ''}\n${x.stderr ?? ''}`;
  }
  return new Set([...out.matchAll(/^(FATAL|ERROR|WARNING)\(([A-Z]+-\d+)\)/gm)].map((m) => `${m[1]}(${m[2]})`));
}

describe.skipIf(missing !== null)(`KEPUB under EPUBCheck${missing ? ` — skipped: ${missing}` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kepub-check-'));
  for (const rel of SAMPLE) {
    it(`adds no EPUBCheck message to ${rel}`, async () => {
      const src = join(CORPUS, rel);
      const k = await convertToKepub(readFileSync(src));
      const out = join(dir, 'book.kepub.epub');
      writeFileSync(out, k.data);
      const before = messages(src);
      const after = messages(out);
      expect([...after].filter((m) => !before.has(m))).toEqual([]);
    }, 300_000);
  }
});
