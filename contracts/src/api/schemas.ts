// What route schemas are made of. A request schema here never refuses what its route took before it
// had one: path parameters and query values are text as sent (a repeated query key is a list), and a
// body the owning service checks is an object whose fields that service judges, with its own
// messages. Response schemas document every answer per status; they never shape one (openapi.ts).
import Type, { type TSchema } from 'typebox';

export const ErrorBody = Type.Object({ error: Type.String() }, { additionalProperties: false, description: 'a failure: `{error: <message>}`' });
export const MessageBody = Type.Object({ message: Type.String() }, { description: 'a simple success' });

/** `{error}` for each status a route may refuse with. */
export const errors = (...statuses: number[]): Record<number, typeof ErrorBody> => Object.fromEntries(statuses.map((s) => [s, ErrorBody]));

/** The failures every signed-in route shares: no or a bad credential (401), a refused cookie write or role (403). */
export const SIGNED_IN = [401, 403] as const;

/** An answer of another content type than JSON (a file, a feed, a page). */
export const content = (type: string | string[], description: string, schema: TSchema = Type.String()) => ({
  description,
  content: Object.fromEntries((Array.isArray(type) ? type : [type]).map((t) => [t, { schema }])),
});
/** Bytes of a file. */
export const Binary = Type.String({ format: 'binary' });
/** No body (a 204, a 304, a redirect). */
export const Empty = (description: string) => Type.Null({ description });

/** A path segment as sent: the route judges it (an id it cannot use is its own 400 or 404). */
export const Param = (description: string) => Type.String({ description });
export const params = <K extends string>(p: Record<K, string>) =>
  Type.Object(Object.fromEntries(Object.entries(p).map(([k, d]) => [k, Param(d as string)])) as Record<K, ReturnType<typeof Param>>);
export const IdParams = params({ id: 'the id (a UUID)' });

/** A query value as sent: text, or a list of texts when the key repeats; the route reads and judges it. */
const QueryValue = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));
export const query = <K extends string>(q: Record<K, string>) =>
  Type.Object(Object.fromEntries(Object.entries(q).map(([k, d]) => [k, QueryValue(d as string)])) as Record<K, ReturnType<typeof QueryValue>>);

/** A body field the owning service checks (type, bounds, its message): any JSON value reaches it. */
export const Field = (description: string) => Type.Optional(Type.Unknown({ description }));
/**
 * A body the owning service checks field by field. An absent or empty body is `{}` to the route, and
 * anything but an object is `invalid request` there as here, so the schema refuses nothing new.
 */
export const serviceBody = (fields: Record<string, string>, description?: string) =>
  Type.Union([Type.Object(Object.fromEntries(Object.entries(fields).map(([k, d]) => [k, Field(d)]))), Type.Null()], description ? { description } : {});

/** A record of this server as a JSON object; its fields are listed where the route knows them. */
export const Obj = (props: Record<string, TSchema> = {}, description?: string) => Type.Object(props, description ? { description } : {});
export const Text = Type.String();
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A JSON answer, or an HTML fragment for a browser-fragment (`HX-Request: true`) call. */
export const jsonOrHtml = (schema: TSchema, description: string) => content(['application/json', 'text/html'], description, schema);
/** Failures that are HTML fragments for `HX-Request` calls, JSON otherwise. */
export const fragmentErrors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: 'a failure: `{error}`, or an HTML fragment for an HX-Request call',
        content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: Type.String() } },
      },
    ]),
  );
/** Any JSON value the route passes on (a list of records the owning service shapes). */
export const AnyJson = (description: string) => Type.Unknown({ description });
/**
 * A body the route reads only after its own checks (the item exists and is visible, say): the schema
 * documents the object and refuses nothing, so those checks keep answering first.
 */
export const routeBody = (fields: Record<string, string>, description?: string) =>
  Type.Union([Type.Object(Object.fromEntries(Object.entries(fields).map(([k, d]) => [k, Field(d)]))), Type.Unknown()], {
    description: `${description ? `${description}; ` : ''}an object (anything else is 400 \`invalid request\` once the route's own checks pass)`,
  });
