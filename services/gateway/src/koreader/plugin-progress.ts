// The KOReader plugin's position push: the book is found as `resolve` finds it, the position saved,
// and the annotation keys the device deleted are deleted (only keys the server gave out).
import type { FastifyInstance } from 'fastify';
import { sendFailure } from '../http/reply';
import { errors } from '../http/schemas';
import { PLUGIN_PREFIX, type PluginContext } from './plugin-context';
import { type BookT, ProgressBody, Pushed, refused, tags } from './plugin-schemas';

export function pluginProgressRoute(app: FastifyInstance, { reading, device, notFound, resolve }: PluginContext): void {
  app.post(
    `${PLUGIN_PREFIX}/progress`,
    { ...device, schema: { tags, summary: 'push a position (and deletions)', body: ProgressBody, response: { 200: Pushed, ...refused, ...errors(409) } } },
    async (req, reply) => {
      const b = (req.body as BookT[])[0]!;
      const author = typeof b.authors === 'string' ? b.authors : Array.isArray(b.authors) ? b.authors[0] : (b.author ?? undefined);
      const found = await resolve(req, { ...b, author });
      if (!found) return sendFailure(reply, notFound());
      const input: Record<string, unknown> = { percentage: b.percentage, client: 'koreader', device: req.device!.name };
      if (b.epubcfi) input.epubcfi = b.epubcfi;
      if (b.page) input.page = b.page;
      if (b.page_count) input.page_count = b.page_count;
      const saved = await reading(req, 'progress-put', { item_id: found.item, input });
      if (!saved.ok) return sendFailure(reply, saved.error);
      // the keys the device deleted: matched and deleted by the reading service, which owns annotations
      const gone = await reading(req, 'annotations-delete-keys', { item_id: found.item, input: { highlights: b.deleted_highlights ?? [], bookmarks: b.deleted_bookmarks ?? [] } });
      if (!gone.ok) return sendFailure(reply, gone.error);
      const { deleted, ignored } = gone.value;
      const v = saved.value;
      return {
        status: v.status,
        media_item_id: found.item,
        matched_by: found.by,
        healed: v.healed,
        progress: v.progress,
        ...(v.conflict ? { conflict: v.conflict } : {}),
        deleted,
        ignored,
      };
    },
  );
}
