// GET /uploads/library-<library_id>/<relative_file_path>: book files and covers from a library's
// folders, for any signed-in user. The path is judged by platform's resolveInside, on real paths.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { sendFile } from '../files/send';
import { sendFailure } from '../http/reply';

export interface UploadsDeps {
  /** Sends the 401 itself when there is no usable session. */
  requireUser: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** A library's folders, or null when there is no such library. */
  folders(libraryId: string): Promise<string[] | null>;
}

export const UPLOADS_CACHE_CONTROL = 'private, max-age=3600';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const fileNotFound = () => fail('not_found', Messages.fileNotFound);

export function uploadsRoutes(app: FastifyInstance, deps: UploadsDeps): void {
  // GET routes answer HEAD too (fastify's exposeHeadRoutes); sendFile sends HEAD no body.
  app.get<{ Params: { libraryId: string; '*': string } }>('/uploads/library-:libraryId/*', { onRequest: deps.requireUser }, async (req, reply) => {
    const { libraryId, '*': relPath } = req.params;
    if (!UUID.test(libraryId)) return sendFailure(reply, fileNotFound());
    const folders = await deps.folders(libraryId.toLowerCase());
    if (folders === null) return sendFailure(reply, fail('not_found', Messages.libraryNotFound));
    // fastify has percent-decoded the wildcard once; decoding again would turn a file really
    // named `%2e%2e` into `..`, so the decoded text is taken as the path.
    const found = await resolveInside(folders, relPath);
    if (!found) return sendFailure(reply, fileNotFound());
    return sendFile(req, reply, found.abs, { cacheControl: UPLOADS_CACHE_CONTROL });
  });
}
