// What the device-sync service tells the rest of Bindery. Every event about a user's devices carries
// `user_id` (the live channel routes them to that user's `devices` and `queue` topics) and the whole
// record after the change, so a read model can be rebuilt from the log alone. A registration is no
// one's until it is approved: `registration-requested` and `registrations-dropped` name no user.
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const Text = (max: number) => Type.String({ maxLength: max });

/** A device's public record (never its credential). */
export const Device = Type.Object({
  id: Uuid,
  user_id: Uuid,
  name: Text(100),
  /** what the device said it runs: `koreader`, `android`, `kobo`, or free text */
  client: Text(50),
  model: Text(100),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Device = Type.Static<typeof Device>;

/** Something waiting for a device, and why. */
export const QueueEntry = Type.Object({
  id: Uuid,
  device_id: Uuid,
  user_id: Uuid,
  media_item_id: Type.Union([Uuid, Type.Null()]),
  /** `download` (a book to put on the device), `remove` (to take off it), `progress` (a newer position) */
  action: Type.Union([Type.Literal('download'), Type.Literal('remove'), Type.Literal('progress')]),
  reason: Text(300),
  /** `pending` until the device takes it; `failed` after a failed delivery (retry sets pending again) */
  status: Type.Union([Type.Literal('pending'), Type.Literal('failed')]),
  attempts: Type.Integer({ minimum: 0 }),
  last_error: Type.Union([Text(500), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type QueueEntry = Type.Static<typeof QueueEntry>;

/** One key a Kobo sync answer sent, with the versions it sent (sync-state.ts in the gateway compares them). */
export const KoboSyncEntry = Type.Object({
  key: Type.String({ pattern: '^[it]:[0-9a-f-]{36}$' }),
  ever: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  sver: Type.Union([Type.String({ maxLength: 120 }), Type.Null()]),
});
export type KoboSyncEntry = Type.Static<typeof KoboSyncEntry>;

/** A registration's id: what the approval URL names (not a UUID). */
const RegistrationId = Type.String({ pattern: '^[0-9A-Z]{1,40}$' });

export const DeviceSyncEvents = {
  /**
   * A device asked to be registered (before anyone approved it, so no `user_id`: the live channel
   * routes it nowhere). Only the SHA-256 of the device's secret `device_code` travels.
   */
  'device-sync.registration-requested.v1': Type.Object({
    registration_id: RegistrationId,
    device_code_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    name: Text(100),
    client: Text(50),
    model: Text(100),
    created_at: Type.String(),
    expires_at: Type.String(),
  }),
  /** the registration became this device (its `device-approved` carries the device's record) */
  'device-sync.registration-approved.v1': Type.Object({ registration_id: RegistrationId, user_id: Uuid, device_id: Uuid }),
  'device-sync.registration-rejected.v1': Type.Object({ registration_id: RegistrationId, user_id: Uuid }),
  /** the device collected its credential (or found its device deleted meanwhile): the registration is used up */
  'device-sync.registration-claimed.v1': Type.Object({ registration_id: RegistrationId, user_id: Type.Union([Uuid, Type.Null()]) }),
  /** registrations forgotten: all of them when the service (re)starts with no replica alive, or those finished or expired an hour ago */
  'device-sync.registrations-dropped.v1': Type.Object({ registration_ids: Type.Array(RegistrationId) }),
  /** a user approved a registration (in the browser, or the app itself after signing in) */
  'device-sync.device-approved.v1': Type.Object({ user_id: Uuid, device: Device, approved_by: Uuid }),
  /**
   * The device collected its credential. Only the SHA-256 of the credential travels (a 256-bit
   * random secret: the hash cannot be turned back into it); the gateway verifies devices against it.
   */
  'device-sync.device-credential-issued.v1': Type.Object({ user_id: Uuid, device_id: Uuid, credential_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }), issued_at: Type.String() }),
  /**
   * The device has a new sync key for KOReader's stock Progress sync (replacing any earlier one).
   * KOReader sends md5(key); only an argon2id hash of that md5 travels, and the gateway verifies
   * `x-auth-key` against it. The key itself is shown once, in the answer of the request that made it.
   */
  'device-sync.sync-key-issued.v1': Type.Object({
    user_id: Uuid,
    device_id: Uuid,
    verifier: Type.String({ pattern: '^\\$argon2id\\$', maxLength: 300 }),
    issued_at: Type.String(),
  }),
  'device-sync.device-updated.v1': Type.Object({ user_id: Uuid, device: Device }),
  /** the device is gone and its credential stops working */
  'device-sync.device-deleted.v1': Type.Object({ user_id: Uuid, device_id: Uuid }),
  /** `collection_name`: the collection's name when the shelf was made (what its queued books say); absent in older logs */
  'device-sync.shelf-added.v1': Type.Object({
    user_id: Uuid,
    device_id: Uuid,
    collection_id: Uuid,
    added_at: Type.String(),
    collection_name: Type.Optional(Type.String({ maxLength: 100 })),
  }),
  'device-sync.shelf-removed.v1': Type.Object({ user_id: Uuid, device_id: Uuid, collection_id: Uuid }),
  'device-sync.shelves-cleared.v1': Type.Object({ user_id: Uuid, device_id: Uuid }),
  'device-sync.queue-entry-saved.v1': Type.Object({ user_id: Uuid, device_id: Uuid, entry: QueueEntry }),
  'device-sync.queue-entry-removed.v1': Type.Object({ user_id: Uuid, device_id: Uuid, entry_id: Uuid }),
  'device-sync.queue-cleared.v1': Type.Object({ user_id: Uuid, device_id: Uuid }),
  /**
   * A Kobo's store address has a new token (issued at approval or creation, or replaced by its owner):
   * only its SHA-256 travels; the gateway finds the device by it for every call under `/kobo/<token>`.
   */
  'device-sync.kobo-token-issued.v1': Type.Object({ user_id: Uuid, device_id: Uuid, token_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }), issued_at: Type.String() }),
  /** which books a Kobo gets: `all` (every book of the libraries its owner sees) or `shelves` (only the collections shelved on it) */
  'device-sync.kobo-settings-saved.v1': Type.Object({ user_id: Uuid, device_id: Uuid, books: Type.Union([Type.Literal('all'), Type.Literal('shelves')]) }),
  /** the Kobo removed a book from itself (its `DELETE /v1/library/<id>`): not offered again until the book changes; the file stays */
  'device-sync.kobo-book-removed.v1': Type.Object({ user_id: Uuid, device_id: Uuid, media_item_id: Uuid, removed_at: Type.String() }),
  /**
   * A Kobo sync answer was built (decision 116): what it sends, under the generation its sync token
   * names. `entries` are the keys (`i:<item id>` books, `t:<collection id>` tags) with the versions
   * sent (`ever` null: the device should not have it any more; `sver` its reading state's version),
   * at most a page of them; they stay pending until the device presents this generation's token.
   */
  'device-sync.kobo-sync-sent.v1': Type.Object({
    user_id: Uuid,
    device_id: Uuid,
    gen: Type.Integer({ minimum: 1 }),
    entries: Type.Array(KoboSyncEntry, { maxItems: 1000 }),
  }),
  /** the Kobo presented the token of generation `gen`: what answers up to it sent, it has; later answers' pending entries are dropped */
  'device-sync.kobo-sync-confirmed.v1': Type.Object({ user_id: Uuid, device_id: Uuid, gen: Type.Integer({ minimum: 0 }) }),
  /** the Kobo presented no token of ours (a full sync): it holds nothing we sent; the generation counts on */
  'device-sync.kobo-sync-reset.v1': Type.Object({ user_id: Uuid, device_id: Uuid }),
  /** the Kobo wrote a book's reading state itself: it has that state (`sver`, the stored position's time) and is not sent it back */
  'device-sync.kobo-state-known.v1': Type.Object({ user_id: Uuid, device_id: Uuid, media_item_id: Uuid, sver: Type.String({ maxLength: 100 }) }),
  /** a deleted account's devices, shelves and queue are gone */
  'device-sync.user-devices-removed.v1': Type.Object({ user_id: Uuid, device_ids: Type.Array(Uuid) }),
} as const;

export type DeviceSyncEventType = keyof typeof DeviceSyncEvents;
export type DeviceSyncEvent = {
  [K in DeviceSyncEventType]: { type: K; data: Type.Static<(typeof DeviceSyncEvents)[K]> };
}[DeviceSyncEventType];
