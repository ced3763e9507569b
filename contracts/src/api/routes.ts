// The /api routes the web app calls, each with the schemas its route declares (decision 119): the
// query string, the JSON body and the success answer. The pages' client (web/src/api.ts) takes its
// types from here, so an answer is typed by its route's response schema, and a wrong path, query key
// or body field does not compile; the gateway's openapi test holds every entry to the registered route.
import type { Static, TSchema } from 'typebox';
import * as Identity from '../identity/index';
import * as Auth from './auth';
import * as Browse from './browse';
import * as Catalog from './catalog';
import * as Device from './device';
import * as Reading from './reading';
import * as Statistics from './statistics';
import { MessageBody, query } from './schemas';

/** What a route takes and answers: its query string, its body, its success answer. */
export interface RouteSpec {
  query?: TSchema;
  body?: TSchema;
  response: TSchema;
}

/** A body the route reads only after its own checks (routeBody): the object it documents. */
const objectOf = <T extends TSchema>(u: { anyOf: [T, ...TSchema[]] }): T => u.anyOf[0];
const page = query({ limit: 'how many (default 50, at most 1000)', offset: 'how many to skip' });

export const WebRoutes = {
  // identity: the caller, sessions, users, settings
  'GET /api/setup/status': { response: Identity.SetupStatus },
  'GET /api/auth/profile': { response: Identity.UserProfile },
  // reading statistics (decision 120)
  'GET /api/me/statistics': { query: query({ year: 'the year, four digits (this year when absent)' }), response: Statistics.PersonStatistics },
  'GET /api/admin/statistics': { query: query({ year: 'the year, four digits (this year when absent)' }), response: Statistics.LibraryStatistics },
  'PUT /api/auth/profile/:user_id': { body: Auth.ProfileBody, response: MessageBody },
  'DELETE /api/auth/profile/:user_id': { response: MessageBody },
  'POST /api/auth/register': { body: Auth.RegisterBody, response: Auth.AuthResponse },
  'PUT /api/auth/password/:user_id': { body: Auth.PasswordBody, response: MessageBody },
  'GET /api/auth/sessions': { response: Auth.SessionList },
  'DELETE /api/auth/sessions': { response: Auth.SignedOutOthers },
  'DELETE /api/auth/sessions/:id': { response: MessageBody },
  'GET /api/auth/users': { response: Auth.UserListing },
  'PUT /api/auth/users/:user_id/max-devices': { body: Auth.MaxDevicesBody, response: MessageBody },
  'GET /api/auth/users/:user_id/libraries': { response: Auth.Grants },
  'PUT /api/auth/users/:user_id/libraries': { body: Auth.GrantsBody, response: Auth.Granted },
  'PUT /api/auth/users/:user_id/permissions': { body: Auth.PermissionsBody, response: Auth.Permitted },
  'GET /api/auth/opds-key': { response: Auth.KeyState },
  'POST /api/auth/opds-key': { response: Auth.NewKey },
  'DELETE /api/auth/opds-key': { response: MessageBody },
  'GET /api/auth/oidc/config': { response: Auth.SsoConfig },
  'GET /api/auth/oidc/links': { response: Auth.SsoLinks },
  'GET /api/system/settings': { response: Auth.Settings },
  'PUT /api/system/settings': { body: Auth.ObjectBody, response: Auth.SettingsUpdated },
  'GET /api/admin/projections': { response: Auth.Projections },
  // mail
  'GET /api/mail/status': { response: Auth.MailStatus },
  'GET /api/invitations/:token': { response: Auth.InvitationOffer },
  'GET /api/admin/invitations': { response: Auth.Invitations },
  'GET /api/auth/ereader': { response: Auth.EreaderAddress },
  'GET /api/sends': { response: Auth.SendList },
  'POST /api/media-items/send': { body: Auth.SendManyBody, response: Auth.SentMany },
  // catalog: libraries, the scanner, items
  'GET /api/libraries': { response: Catalog.LibraryList },
  'GET /api/libraries/browse': { query: query({ path: 'an absolute folder (none: the allowed roots)' }), response: Catalog.Browse },
  'PUT /api/libraries/:id': { body: Catalog.LibraryBody, response: Catalog.LibraryRecord },
  'DELETE /api/libraries/:id': { response: MessageBody },
  'GET /api/libraries/:id/calibre-report': { response: Catalog.CalibreReportAnswer },
  'GET /api/libraries/:id/upload-folders': { response: Catalog.FolderList },
  'GET /api/scanner/status': { response: Catalog.ScanStatus },
  'GET /api/scanner/issues': { query: query({ library_id: 'one library', limit: 'how many (default 100, at most 1000)' }), response: Catalog.Issues },
  'GET /api/admin/hash-conflicts': { response: Catalog.ConflictList },
  'POST /api/admin/hash-conflicts/:id/resolve': { body: Catalog.HashResolveBody, response: Catalog.ConflictResolved },
  'GET /api/media-items': { query: query(Catalog.ItemQuery), response: Catalog.ItemList },
  'GET /api/media-items/search': { query: query(Catalog.SearchQuery), response: Catalog.SearchResult },
  'POST /api/media-items/bulk-update': { body: Catalog.BulkUpdateBody, response: Catalog.BulkReport },
  'GET /api/media-items/:id': { response: Catalog.MediaItem },
  'PUT /api/media-items/:id': { body: Catalog.ItemBody, response: Catalog.ItemUpdated },
  'PUT /api/media-items/:id/cover': { body: Catalog.CoverPageBody, response: Catalog.MediaItem },
  'DELETE /api/media-items/:id/cover': { response: Catalog.MediaItem },
  'GET /api/series': { query: query(Browse.SeriesQuery), response: Browse.SeriesList },
  'GET /api/series/:name': { query: query(Browse.SeriesBooksQuery), response: Browse.SeriesDetail },
  'GET /api/authors': { query: query(Browse.AuthorQuery), response: Browse.AuthorList },
  // reading: positions, annotations, collections, the dashboard
  'GET /api/media-items/:id/progress': { response: Reading.Progress },
  'PUT /api/media-items/:id/progress': { body: objectOf(Reading.PositionBody), response: Reading.ProgressWritten },
  'DELETE /api/media-items/:id/progress': { response: MessageBody },
  'GET /api/media-items/:id/progress-conflicts': { response: Reading.ConflictList },
  'POST /api/progress-conflicts/:id/resolve': { body: objectOf(Reading.ConflictResolveBody), response: Reading.Conflict },
  'GET /api/media-items/:id/rating': { response: Reading.Rating },
  'GET /api/media-items/:id/highlights': { response: Reading.AnnotationList },
  'GET /api/media-items/:id/notes': { response: Reading.AnnotationList },
  'GET /api/media-items/:id/annotations/deleted': { response: Reading.AnnotationList },
  'GET /api/media-items/:id/reader-settings': { response: Reading.ForBook },
  'GET /api/collections': { response: Reading.CollectionList },
  'POST /api/collections': { body: Reading.CollectionBody, response: Reading.Collection },
  'POST /api/collections/preview': { query: page, body: Reading.CollectionBody, response: Reading.Preview },
  'GET /api/collections/:id': { response: Reading.Collection },
  'PUT /api/collections/:id': { body: Reading.CollectionBody, response: Reading.Collection },
  'GET /api/collections/:id/items': { query: page, response: Reading.Members },
  'POST /api/collections/:id/items': { body: Reading.AddItemsBody, response: Reading.ItemsAdded },
  'GET /api/saved-filters': { query: query({ resource_type: 'only those of this kind' }), response: Reading.SavedFilterList },
  'POST /api/saved-filters': { body: Reading.FilterBody, response: Reading.SavedFilter },
  'GET /api/dashboard/sections': { query: query({ limit: 'books per section (default 20, at most 1000)' }), response: Reading.Sections },
  // devices
  'GET /api/devices': { response: Device.DeviceList },
  'GET /api/devices/pending/:id': { response: Device.Pending },
  'POST /api/devices/:id/approve': { response: Device.Approved },
  'POST /api/devices/:id/reject': { response: MessageBody },
  'PUT /api/devices/:id': { body: Device.NameBody, response: Device.Device },
  'DELETE /api/devices/:id': { response: MessageBody },
  'POST /api/devices/:id/sync-key': { response: Device.SyncKey },
  'GET /api/devices/:id/shelves': { response: Device.Shelves },
  'POST /api/devices/:id/shelves': { body: Device.ShelfBody, response: Device.ShelfAdded },
  'DELETE /api/devices/:id/shelves/:collection_id': { response: MessageBody },
  'GET /api/devices/:id/queue': { query: query({ status: 'pending or failed', limit: 'how many', offset: 'how many to skip' }), response: Device.QueueList },
  'DELETE /api/devices/:id/queue': { response: Device.QueueCleared },
  'POST /api/sync-queue/:id/retry': { response: Device.QueueEntry },
  'DELETE /api/sync-queue/:id': { response: MessageBody },
  'POST /api/devices/kobo': { body: Device.CreateBody, response: Device.KoboCreated },
  'PUT /api/devices/:id/kobo': { body: Device.SettingsBody, response: Device.KoboSettings },
  'POST /api/devices/:id/kobo-token': { response: Device.KoboToken },
} as const satisfies Record<string, RouteSpec>;

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type RouteKey = keyof typeof WebRoutes;
/** The paths of the routes of one method. */
export type PathOf<M extends Method> = RouteKey extends infer K ? (K extends `${M} ${infer P}` ? P : never) : never;
type Spec<M extends Method, P extends string> = `${M} ${P}` extends RouteKey ? (typeof WebRoutes)[`${M} ${P}`] : never;

/** A path's parameters, from its `:name` segments. */
export type ParamsOf<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, never>;
/** A route's success answer, as its response schema states it. */
export type AnswerOf<M extends Method, P extends string> = Static<Spec<M, P>['response']>;
/** A route's query string (text values), when it declares one. */
export type QueryOf<M extends Method, P extends string> = Spec<M, P> extends { query: infer Q extends TSchema } ? Static<Q> : never;
/** A route's JSON body, when it declares one. */
export type BodyOf<M extends Method, P extends string> = Spec<M, P> extends { body: infer B extends TSchema } ? Static<B> : never;

type HasParams<P extends string> = P extends `${string}:${string}` ? true : false;
/** What a call to a route passes: its path parameters, its query string, its body. */
export type CallOf<M extends Method, P extends string> = (HasParams<P> extends true ? { params: ParamsOf<P> } : { params?: never }) &
  ([QueryOf<M, P>] extends [never] ? { query?: never } : { query?: QueryOf<M, P> }) &
  ([BodyOf<M, P>] extends [never] ? { body?: never } : { body: BodyOf<M, P> });

/** Whether a call may leave out its options (no path parameters, no body). */
export type OptionalCall<M extends Method, P extends string> = HasParams<P> extends true ? false : [BodyOf<M, P>] extends [never] ? true : false;

/** A concrete path for a pattern and its parameters (each encoded as one segment). */
export function pathOf(pattern: string, params: Record<string, string> | undefined): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params?.[name] ?? ''));
}
