// The KOReader plugin's books: which book a device names (`resolve`), and the page of books the
// device may see, with their hashes (`library`).
import type Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import { fail } from '@bindery/contracts';
import { sendFailure } from '../http/reply';
import { PLUGIN_PREFIX, type PluginContext } from './plugin-context';
import { Library, Paging, refused, Resolved, ResolveQuery, tags } from './plugin-schemas';

export function pluginBookRoutes(app: FastifyInstance, { view, device, access, notFound, resolve, summary }: PluginContext): void {
  app.get(
    `${PLUGIN_PREFIX}/resolve`,
    { ...device, schema: { tags, summary: 'which book this is', querystring: ResolveQuery, response: { 200: Resolved, ...refused } } },
    async (req, reply) => {
      const q = req.query as Type.Static<typeof ResolveQuery>;
      if (!q.uuid && !q.sha256 && !q.file_path && !q.title) return sendFailure(reply, fail('validation', 'one of uuid, sha256, file_path or title is required'));
      const found = await resolve(req, q);
      if (!found) return sendFailure(reply, notFound());
      return summary(req, found);
    },
  );

  app.get(
    `${PLUGIN_PREFIX}/library`,
    { ...device, schema: { tags, summary: 'the books, with their hashes', querystring: Paging, response: { 200: Library, ...refused } } },
    async (req) => {
      const q = req.query as Type.Static<typeof Paging>;
      const limit = Math.min(1000, Math.max(1, Number(q.limit ?? 200)));
      const offset = Number(q.offset ?? 0);
      const page = await view.page(await access(req), limit, offset);
      return {
        data: page.docs.map((d) => ({
          uuid: d.id,
          title: d.title,
          authors: d.authors,
          series: d.series,
          series_index: d.series_index,
          sha256: d.sha256,
          formats: (d.formats as { format: string; sha256: string | null; size: number; file_url: string }[]).map((f) => ({
            format: f.format,
            sha256: f.sha256,
            size: f.size,
            file_url: f.file_url,
          })),
          file_url: d.file_url,
        })),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}
