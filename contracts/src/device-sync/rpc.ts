// Request/reply messages the gateway sends to the device-sync service (`bindery.rpc.device-sync.<op>`).
// Each operation's request and result (decision 118). The gateway has authenticated the caller (a
// user session) or the device (its credential); bodies travel raw (`input`, `query`) and device-sync
// validates them with its own messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';
import { operations, type RequestOf, type ResultOf } from '../rpc';
import { Device, QueueEntry } from './events';

/** The service name on the bus (`bindery.rpc.device-sync.<op>`, NATS user `device-sync`). */
export const SERVICE = 'device-sync';
/** The event source: its schema, its JetStream stream `BINDERY_DEVICE_SYNC`, subjects `bindery.evt.device_sync.<type>`. */
export const SOURCE = 'device_sync';

/** A device as the gateway authenticated it by its credential. */
export const DeviceCaller = Type.Object({ device_id: Type.String(), user_id: Type.String() });
export type DeviceCaller = Type.Static<typeof DeviceCaller>;

const Input = Type.Record(Type.String(), Type.Unknown());
const Query = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));
const OptInput = Type.Optional(Input);
const OptQuery = Type.Optional(Query);
const Id = Type.String();

/**
 * Who calls: a signed-in user (`caller`) or a device by its credential (`device`). Both stay optional
 * in every schema: which one an operation needs is the service's check, answered `unauthorized`.
 */
const req = <P extends Type.TProperties>(props: P) => Type.Object({ caller: Type.Optional(Caller), device: Type.Optional(DeviceCaller), ...props });

export const DeviceSyncRequests = {
  /** public: a device asks to be registered (input: name, client, model) */
  register: req({ input: OptInput }),
  /** public: the device polls with its device_code */
  'register-status': req({ input: OptInput }),
  /** user: a pending registration's name and client, for the approval page */
  'pending-get': req({ id: Id }),
  'pending-approve': req({ id: Id, input: OptInput }),
  'pending-reject': req({ id: Id }),
  'device-update': req({ id: Id, input: OptInput }),
  'device-delete': req({ id: Id }),
  /** user: a new sync key for KOReader's stock sync (the earlier one stops working); shown once */
  'sync-key-issue': req({ id: Id }),
  'shelf-add': req({ id: Id, input: OptInput }),
  'shelf-remove': req({ id: Id, input: OptInput }),
  'shelves-clear': req({ id: Id }),
  'queue-stats': req({}),
  'queue-list': req({ id: Id, query: OptQuery }),
  'queue-all': req({ query: OptQuery }),
  'queue-retry': req({ id: Id }),
  'queue-delete': req({ id: Id }),
  'queue-clear': req({ id: Id }),
  /** device: entries it has taken (input: done, failed) */
  'queue-ack': req({ input: OptInput }),
  /** user: a Kobo made by its owner (input: name, books?) → {device, kobo_token}; the token is shown once */
  'kobo-create': req({ input: OptInput }),
  /** user: a new Kobo token for one of the caller's devices (the earlier one stops working) → {device_id, kobo_token} */
  'kobo-token-issue': req({ id: Id }),
  /** user: which books the Kobo gets (input: books 'all' | 'shelves') */
  'kobo-settings': req({ id: Id, input: OptInput }),
  /** device (a Kobo by its token): the device removed a book from itself (input: media_item_id) */
  'kobo-book-remove': req({ input: OptInput }),
  /**
   * device (a Kobo): a sync request's token (input: gen, the generation it names, or null when the
   * token is none of ours for this Kobo) confirms what answers up to it sent, or resets the sync
   * state (a full sync) → {ours}
   */
  'kobo-sync-confirm': req({ input: OptInput }),
  /** device (a Kobo): what a sync answer sends (input: entries) is recorded pending under a new generation → {gen} */
  'kobo-sync-sent': req({ input: OptInput }),
  /** device (a Kobo): it wrote a book's reading state itself (input: media_item_id, sver) */
  'kobo-state-known': req({ input: OptInput }),
} as const;

/** What `register` answers (the gateway adds the URLs a device needs). */
export const Registration = Type.Object({
  registration_id: Type.String(),
  device_code: Type.String(),
  expires_in: Type.Integer(),
  poll_interval: Type.Integer(),
});
export type Registration = Type.Static<typeof Registration>;

/** What `register-status` answers: `expired` becomes HTTP 410 at the gateway. */
export const RegistrationStatus = Type.Union([
  Type.Object({ status: Type.Literal('pending'), expires_in: Type.Integer() }),
  Type.Object({ status: Type.Literal('expired'), error: Type.String() }),
  Type.Object({
    status: Type.Literal('approved'),
    device_id: Type.String(),
    device_token: Type.String(),
    name: Type.String(),
  }),
]);
export type RegistrationStatus = Type.Static<typeof RegistrationStatus>;

/** A sync key as the user types it into KOReader: four groups of five letters and digits (100 bits). */
export const SYNC_KEY_PATTERN = /^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/;

/** Device credentials start with this, so the gateway tells them from session tokens (JWTs) at a glance. */
export const TOKEN_PREFIX = 'bdt_';
/** Kobo store tokens (the last step of the address written in the Kobo's configuration) start with this. */
export const KOBO_TOKEN_PREFIX = 'bkt_';
/** A Kobo token as it appears in a path: the prefix and 43 base64url characters (256 random bits). */
export const KOBO_TOKEN_PATTERN = /^bkt_[A-Za-z0-9_-]{43}$/;

const Message = Type.Object({ message: Type.String() });
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** which books a Kobo gets: every one the owner sees, or those on its shelves */
const KoboBooks = Type.Union([Type.Literal('all'), Type.Literal('shelves')]);

/** What each operation answers on success (a failure is always a Failure: code and message). */
export const DeviceSyncResults = {
  register: Registration,
  'register-status': RegistrationStatus,
  'pending-get': Type.Object({
    id: Type.String(),
    name: Type.String(),
    client: Type.String(),
    model: Nullable(Type.String()),
    status: Type.String(),
    device_id: Nullable(Type.String()),
    created_at: Type.String(),
    expires_in: Type.Integer(),
  }),
  /** `sync_key` unless the approval asked for none; `kobo_token` for a Kobo: each shown once */
  'pending-approve': Type.Object({ message: Type.String(), device: Device, sync_key: Type.Optional(Type.String()), kobo_token: Type.Optional(Type.String()) }),
  'pending-reject': Message,
  'device-update': Device,
  'device-delete': Message,
  'sync-key-issue': Type.Object({ device_id: Type.String(), sync_key: Type.String(), issued_at: Type.String() }),
  'shelf-add': Type.Object({ message: Type.String(), collection_id: Type.String() }),
  'shelf-remove': Message,
  'shelves-clear': Message,
  'queue-stats': Type.Object({
    devices: Type.Array(Type.Object({ device_id: Type.String(), name: Type.String(), pending: Type.Integer(), failed: Type.Integer(), oldest_entry_at: Nullable(Type.String()) })),
    pending: Type.Integer(),
    failed: Type.Integer(),
  }),
  'queue-list': Type.Object({ device_id: Type.String(), entries: Type.Array(QueueEntry) }),
  'queue-all': Type.Object({ entries: Type.Array(Type.Object({ ...QueueEntry.properties, device_name: Type.String() })) }),
  'queue-retry': QueueEntry,
  'queue-delete': Message,
  'queue-clear': Type.Object({ message: Type.String(), removed: Type.Integer() }),
  'queue-ack': Type.Object({ removed: Type.Integer(), failed: Type.Integer() }),
  'kobo-create': Type.Object({ message: Type.String(), device: Device, kobo_token: Type.String(), books: KoboBooks }),
  'kobo-token-issue': Type.Object({ device_id: Type.String(), kobo_token: Type.String(), issued_at: Type.String() }),
  'kobo-settings': Type.Object({ device_id: Type.String(), books: KoboBooks }),
  'kobo-book-remove': Message,
  'kobo-sync-confirm': Type.Object({ ours: Type.Boolean() }),
  'kobo-sync-sent': Type.Object({ gen: Type.Integer() }),
  'kobo-state-known': Message,
} as const;

/**
 * Device-sync's operations: each name with its request schema (checked once, at the service) and
 * its result schema (what the handler is typed to answer and the gateway's client returns).
 */
export const DeviceSyncOperations = operations(DeviceSyncRequests, DeviceSyncResults);
export type DeviceSyncOperations = typeof DeviceSyncOperations;
export type DeviceSyncOp = keyof DeviceSyncOperations & string;
export type DeviceSyncRequest<K extends DeviceSyncOp> = RequestOf<DeviceSyncOperations, K>;
export type DeviceSyncResult<K extends DeviceSyncOp> = ResultOf<DeviceSyncOperations, K>;
