// Request/reply messages the gateway sends to the device-sync service (`bindery.rpc.device-sync.<op>`).
// The gateway has authenticated the caller (a user session) or the device (its credential); bodies
// travel raw and device-sync validates them with its own messages.
import Type from 'typebox';
import { Caller } from '../identity/rpc';

/** The service name on the bus (`bindery.rpc.device-sync.<op>`, NATS user `device-sync`). */
export const SERVICE = 'device-sync';
/** The event source: its schema, its JetStream stream `BINDERY_DEVICE_SYNC`, subjects `bindery.evt.device_sync.<type>`. */
export const SOURCE = 'device_sync';

/** A device as the gateway authenticated it by its credential. */
export const DeviceCaller = Type.Object({ device_id: Type.String(), user_id: Type.String() });
export type DeviceCaller = Type.Static<typeof DeviceCaller>;

const Input = Type.Record(Type.String(), Type.Unknown());
const Query = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));

/** One shape for every operation: which fields an operation reads is its handler's business. */
export const DeviceSyncRequest = Type.Object({
  caller: Type.Optional(Caller),
  device: Type.Optional(DeviceCaller),
  id: Type.Optional(Type.String()),
  input: Type.Optional(Input),
  query: Type.Optional(Query),
});
export type DeviceSyncRequest = Type.Static<typeof DeviceSyncRequest>;

export const DeviceSyncOps = [
  /** public: a device asks to be registered (input: name, client, model) */
  'register',
  /** public: the device polls with its device_code */
  'register-status',
  /** user: a pending registration's name and client, for the approval page */
  'pending-get',
  'pending-approve',
  'pending-reject',
  'device-update',
  'device-delete',
  /** user: a new sync key for KOReader's stock sync (the earlier one stops working); shown once */
  'sync-key-issue',
  'shelf-add',
  'shelf-remove',
  'shelves-clear',
  'queue-stats',
  'queue-list',
  'queue-all',
  'queue-retry',
  'queue-delete',
  'queue-clear',
  /** device: entries it has taken (input: ids) */
  'queue-ack',
  /** user: a Kobo made by its owner (input: name, books?) → {device, kobo_token}; the token is shown once */
  'kobo-create',
  /** user: a new Kobo token for one of the caller's devices (the earlier one stops working) → {device_id, kobo_token} */
  'kobo-token-issue',
  /** user: which books the Kobo gets (input: books 'all' | 'shelves') */
  'kobo-settings',
  /** device (a Kobo by its token): the device removed a book from itself (input: media_item_id) */
  'kobo-book-remove',
  /**
   * device (a Kobo): a sync request's token (input: gen, the generation it names, or null when the
   * token is none of ours for this Kobo) confirms what answers up to it sent, or resets the sync
   * state (a full sync) → {ours}
   */
  'kobo-sync-confirm',
  /** device (a Kobo): what a sync answer sends (input: entries) is recorded pending under a new generation → {gen} */
  'kobo-sync-sent',
  /** device (a Kobo): it wrote a book's reading state itself (input: media_item_id, sver) */
  'kobo-state-known',
] as const;
export type DeviceSyncOp = (typeof DeviceSyncOps)[number];

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
