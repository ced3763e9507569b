// The KOReader plugin for download: `GET /api/koreader/plugin` answers a zip of the
// bindery.koplugin folder (entries under `bindery.koplugin/`), so a user gets the plugin from the
// server they sync with, without the repository. Public: the plugin is public code and the device
// is not registered yet when its owner fetches it. The zip is made from the folder at the first
// request and kept for the life of the process (the folder is part of the installation).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ZipFile } from 'yazl';
import { fail } from '@bindery/contracts';
import { sendFailure } from '../http/reply';
import { Binary, content, Empty, errors } from '../http/schemas';

export const PLUGIN_DOWNLOAD = '/api/koreader/plugin';
export const PLUGIN_FOLDER = 'bindery.koplugin';
export const PLUGIN_ZIP = 'bindery.koplugin.zip';
export const PLUGIN_MISSING = 'the KOReader plugin is not part of this installation';
/** where the folder is in the repository and in the image (next to dist/, node_modules/) */
const WITHIN = join('clients', 'koreader', PLUGIN_FOLDER);

/**
 * The plugin folder: `clients/koreader/bindery.koplugin` in the nearest directory above the code
 * that has one — the repository root from the sources (services/gateway/src/koreader) and from the
 * bundle (embedded/dist), the app directory in the image (/app/dist → /app). Null when none has it.
 */
export function findPluginDir(from: string = import.meta.dirname): string | null {
  for (let d = from; ; d = dirname(d)) {
    const p = join(d, WITHIN);
    if (existsSync(join(p, '_meta.lua'))) return p;
    if (dirname(d) === d) return null;
  }
}

/** Every file under `dir`, as paths relative to it with `/`, sorted (so the zip is the same each time). */
async function filesOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

export interface PluginZip {
  bytes: Buffer;
  etag: string;
}

/** The folder as a zip: each file under `bindery.koplugin/`, compressed, with its modification time. */
export async function zipPlugin(dir: string): Promise<PluginZip> {
  const zip = new ZipFile();
  for (const f of await filesOf(dir)) {
    const p = join(dir, ...f.split('/'));
    const [data, st] = await Promise.all([readFile(p), stat(p)]);
    zip.addBuffer(data, `${PLUGIN_FOLDER}/${f}`, { mtime: st.mtime, mode: 0o100644 });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  const bytes = Buffer.concat(chunks);
  return { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
}

export function koreaderDownloadRoutes(app: FastifyInstance, dir: string | null = findPluginDir()): void {
  // made once, at the first request; a failure is not kept (the next request tries again)
  let made: Promise<PluginZip> | null = null;
  const zip = () => {
    made ??= zipPlugin(dir!).catch((e: unknown) => {
      made = null;
      throw e;
    });
    return made;
  };

  const schema = {
    tags: ['koreader plugin'],
    summary: 'the KOReader plugin, zipped (public)',
    response: { 200: content('application/zip', 'the plugin', Binary), 304: Empty('unchanged (If-None-Match)'), ...errors(404) },
  };
  app.get(PLUGIN_DOWNLOAD, { schema }, async (req, reply) => {
    if (!dir) return sendFailure(reply, fail('not_found', PLUGIN_MISSING));
    const z = await zip();
    reply.header('ETag', z.etag).header('Cache-Control', 'public, max-age=3600');
    if (req.headers['if-none-match'] === z.etag) return reply.code(304).send();
    return reply.type('application/zip').header('Content-Disposition', `attachment; filename="${PLUGIN_ZIP}"`).header('X-Content-Type-Options', 'nosniff').send(z.bytes);
  });
}
