// GET /uploads/library-<library_id>/<relative_file_path>: the files of catalogued items, for a
// signed-in user who may see the library. The path is judged again by resolveInside, on real paths.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, isUuid, Messages } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { sendFile } from '../files/send';
import { sendFailure } from '../http/reply';
import { Binary, content, Empty, errors, params } from '../http/schemas';

export interface UploadsDeps {
  /** Sends the 401 itself when there is no usable session. */
  requireUser: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** A library's folders, or null when there is no such library or the caller may not see it. */
  folders(req: FastifyRequest, libraryId: string): Promise<string[] | null>;
  /** Whether the file belongs to a catalogued item the caller may see: nothing else is served. */
  catalogued(req: FastifyRequest, libraryId: string, relPath: string): Promise<boolean>;
}

export const UPLOADS_CACHE_CONTROL = 'private, max-age=3600';

const fileNotFound = () => fail('not_found', Messages.fileNotFound);

export function uploadsRoutes(app: FastifyInstance, deps: UploadsDeps): void {
  // GET routes answer HEAD too (fastify's exposeHeadRoutes); sendFile sends HEAD no body.
  const schema = {
    tags: ['files'],
    summary: 'a catalogued file of a library you may see (a book or a cover); Range and conditional requests',
    params: params({ libraryId: 'the library', '*': "the file's path in the library" }),
    response: {
      200: content('application/octet-stream', 'the file (its own type)', Binary),
      206: content('application/octet-stream', 'a byte range of it', Binary),
      304: Empty('unchanged (If-None-Match, If-Modified-Since)'),
      ...errors(401, 403, 404, 416),
    },
  };
  app.get<{ Params: { libraryId: string; '*': string } }>('/uploads/library-:libraryId/*', { onRequest: deps.requireUser, schema }, async (req, reply) => {
    const { libraryId, '*': relPath } = req.params;
    if (!isUuid(libraryId)) return sendFailure(reply, fileNotFound());
    const folders = await deps.folders(req, libraryId.toLowerCase());
    if (folders === null) return sendFailure(reply, fail('not_found', Messages.libraryNotFound));
    // dot-files, stray files and anything the scanner did not catalogue are never served
    if (!(await deps.catalogued(req, libraryId.toLowerCase(), relPath))) return sendFailure(reply, fileNotFound());
    // fastify has percent-decoded the wildcard once; decoding again would turn a file really
    // named `%2e%2e` into `..`, so the decoded text is taken as the path.
    const found = await resolveInside(folders, relPath);
    if (!found) return sendFailure(reply, fileNotFound());
    return sendFile(req, reply, found.abs, { cacheControl: UPLOADS_CACHE_CONTROL });
  });
}
