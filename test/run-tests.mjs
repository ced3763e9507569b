// The test command: the linter and formatter check (biome), vitest over every tier, then the plain
// closing line CI reads. A lint or format finding counts as one failed test.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const outDir = join(root, 'test/.tmp');
mkdirSync(outDir, { recursive: true });
const report = join(outDir, 'vitest-report.json');
// only on a whole run: a run of chosen files is someone working on those
const lint = process.argv.length > 2 ? { status: 0 } : spawnSync('pnpm', ['exec', 'biome', 'ci', '.'], { cwd: root, stdio: 'inherit' });
if (lint.status !== 0) console.log('\nbiome: lint or format findings above (pnpm exec biome check --write . fixes most)');
const args = ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const r = spawnSync('pnpm', args, { cwd: root, stdio: 'inherit' });
let passed = 0,
  failed = 0,
  skipped = 0;
if (existsSync(report)) {
  const j = JSON.parse(readFileSync(report, 'utf8'));
  passed = j.numPassedTests ?? 0;
  failed = (j.numFailedTests ?? 0) + (j.numFailedTestSuites && !j.numFailedTests ? j.numFailedTestSuites : 0);
  skipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
} else failed = 1;
if (lint.status !== 0) failed += 1;
const code = lint.status !== 0 ? 1 : (r.status ?? 1);
if (code !== 0 && failed === 0) failed = 1;
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
