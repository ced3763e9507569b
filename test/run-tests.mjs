// The test command: vitest over every tier, then the plain closing line CI reads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const outDir = join(root, 'test/.tmp');
mkdirSync(outDir, { recursive: true });
const report = join(outDir, 'vitest-report.json');
const args = ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const r = spawnSync('pnpm', args, { cwd: root, stdio: 'inherit' });
let passed = 0, failed = 0, skipped = 0;
if (existsSync(report)) {
  const j = JSON.parse(readFileSync(report, 'utf8'));
  passed = j.numPassedTests ?? 0;
  failed = (j.numFailedTests ?? 0) + (j.numFailedTestSuites && !j.numFailedTests ? j.numFailedTestSuites : 0);
  skipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
} else failed = 1;
const code = r.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code);
