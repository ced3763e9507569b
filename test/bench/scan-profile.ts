// Where the catalog's main thread spends a scan, from a V8 CPU profile (cpu-profiler.mjs): self time
// per package, per function, and per nearest catalog function on the stack (so time inside sharp,
// yauzl or kysely counts towards the scanner step that called it, e.g. extract or apply).
import { readFileSync } from 'node:fs';
import { fmt, packageOf, type CallFrame, type CpuProfile } from './lib';

/** name and file (line numbers only for library code: the tsx-compiled sources report line 1) */
const where = (cf: CallFrame) => {
  if (!cf.url) return cf.functionName || '(anonymous)';
  const file = cf.url.replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '').replace(/^file:\/\/.*?\/(services|platform|contracts|embedded)\//, '$1/');
  return `${cf.functionName || '(anonymous)'} ${file}${cf.lineNumber > 0 ? `:${cf.lineNumber + 1}` : ''}`;
};

export interface ProfileSummary {
  seconds: number;
  /** main-thread time that was not idle */
  busySeconds: number;
  packages: [string, string, string][];
  functions: [string, string, string][];
  catalogSteps: [string, string, string][];
}

export function analyseProfile(file: string, top = 20): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // nearest catalog frame above each node (itself included), memoised
  const step = new Map<number, string>();
  const stepOf = (id: number): string => {
    const known = step.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    const s = /\/services\/catalog\/src\//.test(n.callFrame.url) ? where(n.callFrame) : parent.has(id) ? stepOf(parent.get(id)!) : '(no catalog frame)';
    step.set(id, s);
    return s;
  };
  const pkg = new Map<string, number>();
  const fn = new Map<string, number>();
  const steps = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    const n = byId.get(p.samples[i]!)!;
    if (n.callFrame.functionName === '(idle)') continue;
    busy += dt;
    add(pkg, packageOf(n.callFrame.url, n.callFrame.functionName), dt);
    add(fn, where(n.callFrame), dt);
    add(steps, stepOf(n.id), dt);
  }
  const rows = (m: Map<string, number>): [string, string, string][] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => [k, `${fmt((v / busy) * 100, 1)}%`, fmt(v / 1000, 0)]);
  return { seconds: (p.endTime - p.startTime) / 1e6, busySeconds: busy / 1e6, packages: rows(pkg), functions: rows(fn), catalogSteps: rows(steps) };
}
