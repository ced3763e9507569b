// The Dockerfile's build steps replayed without a container engine: its instructions parsed, the
// build context filtered by .dockerignore the way Docker filters it, COPY and RUN carried out in a
// temporary folder. Used by test/fault/image-build.int.test.ts.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

export interface Instruction {
  /** upper-case keyword: FROM, RUN, COPY, WORKDIR, ENV … */
  op: string;
  args: string;
  line: number;
}

/** The instructions of a Dockerfile: continuation lines joined, comments and blank lines dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/u, '');
    if (pending === '' && /^\s*(#|$)/u.test(line)) return;
    if (/^\s*#/u.test(line)) return; // a comment inside a continued instruction
    if (pending === '') start = i + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const whole = (pending + line).trim();
    pending = '';
    const m = whole.match(/^(\S+)\s*(.*)$/su);
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start });
  });
  return out;
}

/** The instructions of each stage, by its `AS` name (or its index). */
export function stages(list: Instruction[]): Map<string, Instruction[]> {
  const out = new Map<string, Instruction[]>();
  let cur: Instruction[] | null = null;
  for (const ins of list) {
    if (ins.op === 'FROM') {
      cur = [ins];
      out.set(ins.args.match(/\sAS\s+(\S+)$/iu)?.[1] ?? String(out.size), cur);
    } else cur?.push(ins);
  }
  return out;
}

// ---------------------------------------------------------------- .dockerignore

interface IgnoreRule {
  exclude: boolean;
  re: RegExp;
}

/**
 * A .dockerignore's rules as Docker reads them: `#` comments, `!` exceptions, paths cleaned and
 * relative to the context, `**` for any number of folders, `*` and `?` within one name. A path is
 * excluded when the last rule matching it or one of its parent folders is not an exception.
 */
export function dockerignore(text: string): (rel: string) => boolean {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    let p = raw.trim();
    if (p === '' || p.startsWith('#')) continue;
    const exclude = !p.startsWith('!');
    if (!exclude) p = p.slice(1).trim();
    p = posix.normalize(p).replace(/^\/+/u, '').replace(/\/+$/u, '');
    if (p === '' || p === '.') continue;
    rules.push({ exclude, re: globToRegExp(p) });
  }
  return (rel) => {
    const parts = rel.split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const r of rules) if (candidates.some((c) => r.re.test(c))) excluded = r.exclude;
    return excluded;
  };
}

function globToRegExp(glob: string): RegExp {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        while (glob[i + 1] === '*') i++;
        if (glob[i + 1] === '/') {
          i++;
          re += '(.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < glob.length) re += `\\${glob[++i]}`;
    else re += /[.+()|{}$^[\]]/u.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`${re}$`, 'u');
}

// ---------------------------------------------------------------- replay

export interface Replay {
  /** where the build stage's WORKDIR and absolute paths were placed: `/src` → `<root>/src` */
  root: string;
  /** a path of the build stage's file system, inside `root` */
  at(absolute: string): string;
  /** what each step did, for a failure message */
  log: string[];
}

export interface ReplayOptions {
  /** the build context (the repository) */
  context: string;
  /** an empty folder standing for the build stage's `/` */
  root: string;
  /** instead of running it: a RUN that installs a tool the host must already have (returns the reason) */
  skipRun?(cmd: string): string | null;
  /** a RUN's command as run here (e.g. pnpm offline) */
  rewriteRun?(cmd: string): string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/**
 * Carries out one stage's WORKDIR, COPY and RUN in `root` (ENV is applied, everything else is
 * refused, so a new instruction type is a visible failure, not a silently skipped step). A COPY
 * source missing from the filtered context fails like Docker's `not found`.
 */
export function replayStage(steps: Instruction[], o: ReplayOptions): Replay {
  const ignored = existsSync(join(o.context, '.dockerignore')) ? dockerignore(readFileSync(join(o.context, '.dockerignore'), 'utf8')) : () => false;
  const at = (p: string) => join(o.root, posix.normalize(p));
  let workdir = '/';
  const env: NodeJS.ProcessEnv = { ...o.env };
  const log: string[] = [];
  for (const s of steps) {
    switch (s.op) {
      case 'FROM':
        break;
      case 'WORKDIR':
        workdir = posix.resolve(workdir, s.args);
        mkdirSync(at(workdir), { recursive: true });
        break;
      case 'ENV':
        for (const m of s.args.matchAll(/(\w+)=("[^"]*"|\S+)/gu)) env[m[1]!] = m[2]!.replace(/^"|"$/gu, '');
        break;
      case 'COPY': {
        const words = s.args.split(/\s+/u);
        if (words.some((w) => w.startsWith('--'))) throw new Error(`line ${s.line}: COPY options are not replayed: ${s.args}`);
        const dest = posix.resolve(workdir, words.at(-1)!);
        const intoFolder = words.at(-1)!.endsWith('/') || words.length > 2 || words.at(-1) === '.';
        for (const src of words.slice(0, -1)) {
          const rel = posix.normalize(src).replace(/^\/+/u, '').replace(/\/+$/u, '');
          const whole = rel === '.' || rel === '';
          const from = whole ? o.context : join(o.context, rel);
          if (!existsSync(from) || (!whole && ignored(rel))) throw new Error(`line ${s.line}: COPY ${src}: not found in the build context (missing or excluded by .dockerignore)`);
          if (lstatSync(from).isDirectory()) copyTree(o.context, whole ? '' : rel, at(dest), ignored);
          else {
            const target = intoFolder ? join(at(dest), posix.basename(rel)) : at(dest);
            mkdirSync(dirname(target), { recursive: true });
            copyFileSync(from, target);
          }
        }
        log.push(`COPY ${s.args}`);
        break;
      }
      case 'RUN': {
        const skip = o.skipRun?.(s.args);
        if (skip) {
          log.push(`RUN ${s.args} (not run: ${skip})`);
          break;
        }
        // the stage's absolute paths (`/app`, `/src/…`) live under root here
        const cmd = (o.rewriteRun?.(s.args) ?? s.args).replace(/(^|[\s=])\/(?=[A-Za-z])/gu, `$1${o.root}/`);
        const r = spawnSync('sh', ['-c', cmd], { cwd: at(workdir), env, encoding: 'utf8', timeout: o.timeoutMs ?? 300_000 });
        log.push(`RUN ${cmd}\n${r.stdout}${r.stderr}`);
        if (r.status !== 0) throw new Error(`line ${s.line}: RUN ${cmd} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
        break;
      }
      default:
        throw new Error(`line ${s.line}: ${s.op} is not replayed`);
    }
  }
  return { root: o.root, at, log };
}

/** The context's folder `rel` copied into `dest` (its contents, as COPY does), without what .dockerignore excludes. */
function copyTree(context: string, rel: string, dest: string, ignored: (rel: string) => boolean): void {
  mkdirSync(dest, { recursive: true });
  for (const d of readdirSync(join(context, rel), { withFileTypes: true })) {
    const r = rel === '' ? d.name : `${rel}/${d.name}`;
    const excluded = ignored(r);
    if (d.isDirectory()) {
      // an excluded folder is still entered when an exception could bring something back inside it
      if (excluded && !mayReinclude(context, r, ignored)) continue;
      copyTree(context, r, join(dest, d.name), ignored);
    } else if (!excluded && (d.isFile() || d.isSymbolicLink())) copyFileSync(join(context, r), join(dest, d.name));
  }
}

function mayReinclude(context: string, rel: string, ignored: (rel: string) => boolean): boolean {
  // node_modules and .git are large: only look inside when one of their direct files is kept
  if (/(^|\/)(node_modules|\.git)$/u.test(rel)) return false;
  const walk = (r: string): boolean =>
    readdirSync(join(context, r), { withFileTypes: true }).some((d) => {
      const c = `${r}/${d.name}`;
      return d.isDirectory() ? walk(c) : !ignored(c);
    });
  return walk(rel);
}
