// What the reference kosync server (koreader-sync-server) answers and accepts: its error codes and
// bodies `{code, message}`, its key fields and document ids, and the schemas of its routes.
import Type from 'typebox';
import type { FastifyReply } from 'fastify';
import { ErrorBody } from '../http/schemas';

export const KOSYNC_PREFIX = '/api/kosync';

/** The reference server's errors (koreader-sync-server config/errors.lua). */
export const KosyncErrors = {
  2000: { status: 502, message: 'Unknown server error.' },
  2001: { status: 401, message: 'Unauthorized' },
  2002: { status: 402, message: 'Username is already registered.' },
  2003: { status: 403, message: 'Invalid request' },
  2004: { status: 403, message: "Field 'document' not provided." },
  2005: { status: 402, message: 'User registration is disabled.' },
} as const;
type KosyncCode = keyof typeof KosyncErrors;

/** the reference server's failure body (and ours, `{error}`, for a spent attempt budget) */
const KosyncFailure = Type.Union([Type.Object({ code: Type.Integer(), message: Type.String() }), ErrorBody], { description: "the reference server's `{code, message}`" });
export const kosyncFailures = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, KosyncFailure]));
/** the headers of the signed-in routes */
export const KosyncHeaders = Type.Object(
  { 'x-auth-user': Type.Optional(Type.String()), 'x-auth-key': Type.Optional(Type.String()) },
  { description: 'the username and the password (or a device sync key)' },
);
export const KosyncBody = (description: string) => Type.Unknown({ description: `${description}; checked by the route, with the reference server's codes` });
export const Position = Type.Object(
  {
    document: Type.Optional(Type.String()),
    percentage: Type.Optional(Type.Number()),
    progress: Type.Optional(Type.String()),
    device: Type.Optional(Type.String()),
    device_id: Type.Optional(Type.String()),
    timestamp: Type.Optional(Type.Number()),
  },
  { description: 'the last position pushed for the document; `{}` when there is none' },
);

export const kosyncError = (reply: FastifyReply, code: KosyncCode) => reply.code(KosyncErrors[code].status).send({ code, message: KosyncErrors[code].message });

/** the reference server's key fields: text, not empty, no colon */
export const keyField = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1024 && !v.includes(':');
export const DOCUMENT = /^[A-Za-z0-9_-]{1,128}$/;
