// Runs the KOReader plugin's own client (clients/koreader/bindery.koplugin/binderyclient.lua) under
// LuaJIT with luasocket and lua-cjson, through clients/koreader/spec/driver.lua. What the machine
// lacks is named, so the test that needs it skips and says why.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';

export const PLUGIN_DIR = join(ROOT, 'clients/koreader/bindery.koplugin');
export const DRIVER = join(ROOT, 'clients/koreader/spec/driver.lua');
/** main.lua itself on stand-ins for KOReader's modules */
export const READER = join(ROOT, 'clients/koreader/spec/reader.lua');

/** null when LuaJIT, luasocket and lua-cjson are all there; otherwise why the plugin tests skip. */
export function luaMissing(): string | null {
  const v = spawnSync('luajit', ['-v'], { encoding: 'utf8' });
  if (v.error || v.status !== 0) return 'luajit is not installed (apt-get install luajit lua-socket lua-cjson)';
  for (const mod of ['socket.http', 'cjson']) {
    const r = spawnSync('luajit', ['-e', `require("${mod}")`], { encoding: 'utf8' });
    if (r.status !== 0) return `the Lua module ${mod} is missing (apt-get install ${mod === 'cjson' ? 'lua-cjson' : 'lua-socket'})`;
  }
  return null;
}

/** Every Lua file of the plugin and the driver, for the syntax check. */
export function luaFiles(): string[] {
  const spec = join(ROOT, 'clients/koreader/spec');
  return [...readdirSync(PLUGIN_DIR).map((f) => join(PLUGIN_DIR, f)), ...readdirSync(spec).map((f) => join(spec, f))].filter((f) => f.endsWith('.lua'));
}

/** LuaJIT's compiler over a file (parse and byte-compile, no run): the messages, empty when clean. */
export function luaSyntaxErrors(file: string): string {
  const r = spawnSync('luajit', ['-bl', file], { encoding: 'utf8' });
  return r.status === 0 ? '' : `${r.stderr}${r.stdout}`.trim() || `luajit exited with ${r.status}`;
}

export type Line = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Runs a Lua script (the driver unless named) with these arguments; `onLine` sees each JSON line as
 * it comes, and once it has finished the script is told to go on (a line on its stdin: reader.lua
 * waits for it, so the test can check the server between steps). Resolves with every line and the
 * exit code.
 */
export function runDriver(args: string[], onLine: (l: Line) => unknown = () => undefined, script = DRIVER): Promise<{ lines: Line[]; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('luajit', [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    p.stdin.on('error', () => undefined); // a script that reads nothing may be gone already
    const lines: Line[] = [];
    let out = '';
    let stderr = '';
    const pending: Promise<unknown>[] = [];
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d: string) => {
      out += d;
      let nl = out.indexOf('\n');
      while (nl >= 0) {
        const text = out.slice(0, nl);
        out = out.slice(nl + 1);
        nl = out.indexOf('\n');
        if (!text.trim()) continue;
        const line = JSON.parse(text) as Line;
        lines.push(line);
        const done = Promise.resolve()
          .then(() => onLine(line))
          .then(() => {
            if (!p.stdin.destroyed) p.stdin.write('go\n');
          });
        done.catch(() => p.kill());
        pending.push(done);
      }
    });
    p.stderr.on('data', (d) => {
      stderr += String(d);
    });
    p.on('error', reject);
    p.on('close', (code) => {
      Promise.all(pending).then(() => resolve({ lines, code, stderr }), reject);
    });
  });
}

/** A Lua-encoded empty table arrives as {}: a list either way. */
export const list = <T = Line>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
