// POST /api/libraries/<id>/uploads: one book file per request, its bytes the raw body (streamed to
// disk, never held in memory), its name and place in the query; GET /api/libraries/<id>/upload-folders:
// where it may go. The file joins a folder of the library under a name of its own; the scanner then
// catalogues it like any other file (a scan of the library is asked for), and the answer says what
// came of it: catalogued (with the book), a file issue, or still waiting for the scanner.
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { fail, httpStatusOf, isUuid, Messages, type Failure } from '@bindery/contracts';
import { formatOf } from '@bindery/catalog/format-of';
import type { Auth } from '../http/authenticate';
import type { CallCatalog } from '../http/rpc';
import { sendFailure } from '../http/reply';
import { errors, IdParams, query, SIGNED_IN } from '../http/schemas';
import type { Reads } from '../read-model/reads';
import type { Access } from '../read-model/access';
import { KosyncView } from '../read-model/kosync-view';
import { type BookFormat, checkUpload, UploadRefused } from '../files/upload-check';
import { BadTarget, checkName, checkSubfolder, DiskFull, place, receive, removeMade, Stalled, targetDir, TooLarge } from '../files/upload-store';
import { liftDeadline } from '../http/request-deadline';
import type { UploadOutcomes } from '../files/upload-outcomes';
import { FolderList } from '@bindery/contracts/api/catalog';

export interface UploadDeps {
  auth: Auth;
  reads: Reads;
  catalog: CallCatalog;
  outcomes: UploadOutcomes;
  /** the largest file taken (UPLOAD_MAX_BYTES) */
  maxBytes: number;
  /** how long an answer waits for the scanner's outcome before saying it is still queued */
  waitMs?: number;
  /** HTTP_REQUEST_TIMEOUT_SECONDS: an upload's body must bring PACE_BYTES in every such window */
  requestMs: number;
}

/** What an upload must bring in every HTTP_REQUEST_TIMEOUT_SECONDS window once its caller is judged. */
export const PACE_BYTES = 1024 * 1024;

export const UploadMessages = {
  nameRequired: 'name is required (the file name)',
  badFolder: (n: number) => `folder must be the number of one of the library's folders (0 to ${n - 1})`,
  noFolders: 'the library has no folders to upload into',
  unsupported: (name: string) => `"${name}" is not a supported book file (EPUB, KEPUB, PDF, CBZ, CBR, CB7, MOBI, PRC, AZW, AZW3, FB2)`,
  tooLarge: (max: number) => `the file is larger than the upload limit of ${formatBytes(max)} (UPLOAD_MAX_BYTES)`,
  diskFull: "there is not enough space on the server's disk for this file",
  duplicate: (title: string) => `this file is already in the catalog: "${title}"`,
  duplicateUploading: 'this file is being uploaded already',
  catalogued: 'uploaded and catalogued',
  queued: 'uploaded; the scanner will catalogue it shortly',
  issue: 'uploaded, but the scanner could not read it',
} as const;

const formatBytes = (n: number) => (n % 2 ** 20 === 0 ? `${n / 2 ** 20} MiB` : n >= 10 ** 6 ? `${Math.round(n / 10 ** 5) / 10} MB` : `${n} bytes`);

const Uploaded = Type.Object(
  {
    status: Type.Union([Type.Literal('catalogued'), Type.Literal('queued'), Type.Literal('issue')]),
    message: Type.String(),
    name: Type.String({ description: 'the name the file was stored under (a suffix " (1)" … when the name was taken)' }),
    path: Type.String({ description: "the file's path in its library folder" }),
    folder: Type.Integer(),
    size: Type.Integer(),
    sha256: Type.String(),
    renamed: Type.Boolean(),
    scan_id: Type.Union([Type.String(), Type.Null()]),
    media_item_id: Type.Optional(Type.String()),
    url: Type.Optional(Type.String({ description: "the book's page" })),
    error: Type.Optional(Type.String({ description: "the scanner's error (status issue)" })),
  },
  { description: 'the file was stored' },
);
const Duplicate = Type.Object({ error: Type.String(), media_item_id: Type.String(), url: Type.String() }, { description: 'the same bytes are catalogued already' });

const bookUrl = (id: string) => `/books/${id}`;
const one = (v: unknown): string | undefined => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined);

export function libraryUploadRoutes(app: FastifyInstance, deps: UploadDeps): void {
  const u = uploadContext(deps);
  uploadFolderRoute(app, u);
  uploadRoute(app, u);
}

type UploadContext = ReturnType<typeof uploadContext>;

/** What the upload routes share, made once for them both. */
function uploadContext(deps: UploadDeps) {
  /** The library's folders when the caller may see it, else the failure sent. */
  const foldersOf = async (req: FastifyRequest, reply: FastifyReply): Promise<string[] | null> => {
    const id = (req.params as { id: string }).id;
    const c = await deps.reads.context(req.caller!);
    const lib = await deps.reads.catalog.library(c.access, true, id);
    if (!lib.ok) {
      sendFailure(reply, lib.error);
      return null;
    }
    return lib.value.folders ?? [];
  };
  return {
    deps,
    // admins, and the people an admin allowed to edit the catalog (can_edit_metadata: one permission for
    // curating, decision in docs/decisions.md)
    uploader: { onRequest: deps.auth.requireEditor },
    kosync: new KosyncView(deps.reads.db),
    waitMs: deps.waitMs ?? 20_000,
    // hashes being stored right now in this process: a second copy sent meanwhile is a duplicate too
    inFlight: new Set<string>(),
    foldersOf,
  };
}

function uploadFolderRoute(app: FastifyInstance, { deps, uploader, foldersOf }: UploadContext): void {
  app.get(
    '/api/libraries/:id/upload-folders',
    {
      ...uploader,
      schema: {
        tags: ['uploads'],
        summary: 'the folders of a library a book may be uploaded into',
        params: IdParams,
        response: { 200: FolderList, ...errors(400, ...SIGNED_IN, 404) },
      },
    },
    async (req, reply) => {
      const folders = await foldersOf(req, reply);
      if (!folders) return reply;
      const admin = req.caller!.role === 'admin';
      return reply.send({
        library_id: (req.params as { id: string }).id.toLowerCase(),
        max_bytes: deps.maxBytes,
        folders: folders.map((f, index) => ({ index, name: path.basename(f) || f, ...(admin ? { path: f } : {}) })),
      });
    },
  );
}

function uploadRoute(app: FastifyInstance, u: UploadContext): void {
  // the body is the file: no parser reads it, the route streams it to disk
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.post(
      '/api/libraries/:id/uploads',
      {
        ...u.uploader,
        schema: {
          tags: ['uploads'],
          summary: 'upload one book file into a folder of a library (the raw body is the file)',
          params: IdParams,
          querystring: query({
            name: 'the file name (with its extension)',
            folder: "which of the library's folders (its number, default 0)",
            subfolder: "a folder under it ('a/b', made when missing)",
          }),
          response: {
            201: Uploaded,
            409: Duplicate,
            ...errors(400, ...SIGNED_IN, 404, 413, 415, 422, 503),
          },
        },
      },
      async (req, reply) => upload(u, req, reply),
    );
  });
}

/** Where an upload goes and as what, judged from its path and query before any of its body is read. */
interface Destination {
  folders: string[];
  folder: number;
  name: string;
  segments: string[];
  format: BookFormat;
}

/** One upload: judged, streamed to disk, checked, stored unless a duplicate, then the scanner's outcome awaited. */
async function upload(u: UploadContext, req: FastifyRequest, reply: FastifyReply) {
  const dest = await destinationOf(u, req, reply);
  if (!dest) return reply;
  const { folders, folder, name, segments, format } = dest;
  const { deps, kosync, inFlight } = u;
  const lid = (req.params as { id: string }).id.toLowerCase();
  let made: string[] = [];
  let temp: string | null = null;
  let sha: string | null = null;
  // what to answer, sent once nothing of a refused upload is left on disk
  let answer: Answer;
  try {
    const target = await targetDir(folders[folder]!, segments);
    made = target.made;
    // the caller and the target are judged: the body may take as long as the link needs, at a pace
    liftDeadline(req);
    const got = await receive(req.raw, target.dir, deps.maxBytes, { windowMs: deps.requestMs, minBytes: PACE_BYTES });
    temp = got.temp;
    await checkUpload(got.temp, got.size, format, name.toLowerCase().endsWith('.fb2.zip'));
    const c = await deps.reads.context(req.caller!);
    const known = await kosync.itemBySha256(c.access, got.sha256);
    if (known) answer = { status: 409, body: await duplicate(deps.reads, c.access, known.item) };
    else if (inFlight.has(got.sha256)) answer = failure(fail('conflict', UploadMessages.duplicateUploading));
    else {
      sha = got.sha256;
      inFlight.add(sha);
      const stored = await place(got.temp, target.dir, name);
      temp = null;
      made = [];
      const rel = [...segments, stored].join('/');
      const since = Date.now();
      // the existing scan queue (a waiting scan of the library is reused), asked by the uploader
      // (an admin or an editor) for this library alone
      const scan = await deps.catalog('upload-scan', { caller: req.caller!, library_id: lid });
      const scanId = scan.ok ? scan.value.scan_id : null;
      const file = { name: stored, path: rel, folder, size: got.size, sha256: got.sha256, renamed: stored !== name, scan_id: scanId };
      const outcome = await waitForScanner(u, c.access, lid, rel, got.sha256, scanId, since);
      answer = { status: 201, body: { ...outcome, ...file } };
    }
  } catch (e) {
    const refused = refusalOf(e, req, reply, deps.maxBytes);
    if (!refused) {
      await cleanUp(temp, made);
      throw e;
    }
    answer = refused;
  } finally {
    if (sha) inFlight.delete(sha);
  }
  await cleanUp(temp, made);
  if (answer.close) reply.header('connection', 'close');
  return reply.code(answer.status).send(answer.body);
}

/** The upload's destination, or null once the failure is sent. */
async function destinationOf({ deps, foldersOf }: UploadContext, req: FastifyRequest, reply: FastifyReply): Promise<Destination | null> {
  const q = (req.query ?? {}) as Record<string, unknown>;
  const libraryId = (req.params as { id: string }).id;
  if (!isUuid(libraryId)) return refuse(reply, fail('validation', Messages.invalidLibraryId));
  const folders = await foldersOf(req, reply);
  if (!folders) return null;
  if (folders.length === 0) return refuse(reply, fail('validation', UploadMessages.noFolders));
  const folderRaw = one(q.folder) ?? '0';
  const folder = /^\d{1,3}$/.test(folderRaw) ? Number(folderRaw) : -1;
  if (folder < 0 || folder >= folders.length) return refuse(reply, fail('validation', UploadMessages.badFolder(folders.length)));
  const rawName = one(q.name);
  if (rawName === undefined || rawName === '') return refuse(reply, fail('validation', UploadMessages.nameRequired));
  let name: string;
  let segments: string[];
  try {
    name = checkName(rawName);
    segments = checkSubfolder(one(q.subfolder));
  } catch (e) {
    if (e instanceof BadTarget) return refuse(reply, fail('validation', e.message));
    throw e;
  }
  const format = formatOf(name);
  if (!format) return refuse(reply, fail('unsupported_media_type', UploadMessages.unsupported(name)));
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > deps.maxBytes) {
    // what is left of the body is not read: the connection goes when the answer is sent
    reply.header('connection', 'close');
    return refuse(reply, fail('payload_too_large', UploadMessages.tooLarge(deps.maxBytes)));
  }
  return { folders, folder, name, segments, format };
}

const refuse = (reply: FastifyReply, f: Failure): null => {
  sendFailure(reply, f);
  return null;
};

type Answer = { status: number; body: unknown; close?: boolean };

/** The answer to an upload refused by what the store or the check threw, or null for an error of the server's. */
function refusalOf(e: unknown, req: FastifyRequest, reply: FastifyReply, maxBytes: number): Answer | null {
  if (e instanceof TooLarge) return { ...failure(fail('payload_too_large', UploadMessages.tooLarge(maxBytes))), close: true };
  if (e instanceof DiskFull) return failure(fail('service_unavailable', UploadMessages.diskFull));
  if (e instanceof Stalled) return { status: 408, body: { error: Messages.requestTimeout }, close: true };
  if (e instanceof BadTarget) return failure(fail('validation', e.message));
  if (e instanceof UploadRefused) return failure(fail(e.kind === 'type' ? 'unsupported_media_type' : 'unprocessable', e.message));
  // the client went away mid-body: nobody to answer
  if (req.raw.destroyed || reply.raw.destroyed) return { status: 400, body: { error: Messages.invalidRequest }, close: true };
  return null;
}

const failure = (f: Failure): Answer => ({ status: httpStatusOf(f.code), body: { error: f.message } });
const cleanUp = async (temp: string | null, made: string[]) => {
  if (temp) await unlink(temp).catch(() => {});
  await removeMade(made);
};

async function duplicate(reads: Reads, access: Access, item: string) {
  const r = await reads.catalog.item(access, item);
  const title = r.ok ? String((JSON.parse(r.value) as { title?: unknown }).title ?? '') : '';
  return { error: UploadMessages.duplicate(title), media_item_id: item, url: bookUrl(item) };
}

/** Polls the read model for the file's item, the log for its issue or its scan's end, until `waitMs`. */
async function waitForScanner({ deps, kosync, waitMs }: UploadContext, access: Access, lid: string, rel: string, sha: string, scanId: string | null, since: number) {
  const until = since + waitMs;
  for (;;) {
    const hit = await kosync.itemBySha256(access, sha);
    if (hit) return { status: 'catalogued' as const, message: UploadMessages.catalogued, media_item_id: hit.item, url: bookUrl(hit.item) };
    const issue = deps.outcomes.issue(lid, rel, since);
    if (issue) return { status: 'issue' as const, message: UploadMessages.issue, error: issue };
    const finished = scanId ? deps.outcomes.finishedAt(scanId) : null;
    // the scan is over: the read model gets a moment to show its items
    if (Date.now() >= until || (finished !== null && Date.now() - finished > 2000)) return { status: 'queued' as const, message: UploadMessages.queued };
    await deps.outcomes.next(200);
  }
}
