// Shared pieces of the backup tests: `pnpm backup` / `pnpm restore` run as a person runs them, and an archive's manifest.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { verifyArchive } from '@bindery/platform/backup';
import { ROOT } from '../support/bindery';

/** Runs `pnpm backup` / `pnpm restore` (their sources, as the scripts do) with `env`. */
export function cli(which: 'backup' | 'restore', args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, `embedded/src/${which}-cli.ts`), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('exit', (code) => res({ code, out, err }));
  });
}

/** The manifest inside an archive (checked whole, as a restore checks it). */
export const manifestOf = async (file: string): Promise<Record<string, any>> => (await verifyArchive(file)) as unknown as Record<string, any>;
