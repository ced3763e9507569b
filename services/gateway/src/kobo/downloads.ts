// What a Kobo downloads: a book as our KEPUB (made by the catalog), and covers scaled to the size
// the device asks for (a thumbnail's source up to 200×300, the full cover above).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid, type Result } from '@bindery/contracts';
import type { KoboContext } from './context';
import { epubOf } from './library';

const ok = <T>(r: Result<T>): T | null => (r.ok ? r.value : null);

export function koboDownloadRoutes(app: FastifyInstance, k: KoboContext): void {
  const { P, hook, deps, access, itemsOf, bookOf } = k;
  app.get(`${P}/v1/books/:id/file/kepub`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const kepub = await deps.kepubs.download(epubOf(item)!.sha256!);
    if (!kepub) return reply.code(404).send({ error: 'book not found' });
    return reply
      .header('Content-Type', 'application/kepub+zip')
      .header('Content-Length', String(kepub.size))
      .header('Content-Disposition', `attachment; filename="${item.id}.kepub.epub"`)
      .send(kepub.stream);
  });

  const cover = async (req: FastifyRequest, reply: FastifyReply) => {
    const p = req.params as { imageId: string; w: string; h: string };
    const id = p.imageId.split('.')[0]!;
    const w = Math.min(2000, Math.max(1, Number.parseInt(p.w, 10) || 0));
    const h = Math.min(3000, Math.max(1, Number.parseInt(p.h, 10) || 0));
    if (!isUuid(id) || !(await itemsOf(req, [id.toLowerCase()])).size) return reply.code(404).send({ error: 'cover not found' });
    const r = ok(await deps.covers.get(req.caller!, await access(req), id.toLowerCase(), w <= 200 && h <= 300 ? 'thumbnail' : 'cover'));
    if (!r) return reply.code(404).send({ error: 'cover not found' });
    const { default: sharp } = await import('sharp');
    const data = await sharp(r.data, { failOn: 'none' }).resize(w, h, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
    return reply.header('Content-Type', 'image/jpeg').header('Cache-Control', 'private, max-age=86400').send(data);
  };
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/false/image.jpg`, hook, cover);
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/:quality/:grey/image.jpg`, hook, cover);
}
