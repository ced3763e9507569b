// The public bodies of the device routes: registration and its status poll, a user's devices and
// Kobos, shelves, the sync queue and the sidecar, as device-sync and the gateway's devices view answer them.
import Type from 'typebox';
import * as DeviceSync from '../device-sync/index';
import { Nullable } from './schemas';

const S = Type.String();
export const SyncEndpoints = Type.Object({ progress: S, metadata: S, library: S, bookmarks: S, resolve: S }, { description: 'the KOReader sync paths' });
export const Registered = Type.Object(
  {
    device_code: S,
    user_code: S,
    auth_url: Type.String({ description: 'the browser path that approves it: /devices/approve/<id>' }),
    verification_uri: Type.Optional(S),
    status_url: S,
    expires_in: Type.Integer(),
    poll_interval: Type.Integer(),
    setup_instructions: S,
    sync_endpoints: SyncEndpoints,
  },
  { description: 'a pending registration (no device id until it is approved)' },
);
export const RegistrationStatus = Type.Union(
  [
    Type.Object({ status: Type.Literal('pending'), expires_in: Type.Integer() }),
    Type.Object({ status: Type.Literal('approved'), device_id: S, device_token: S, token_type: Type.Literal('Device'), name: S, sync_endpoints: SyncEndpoints }),
  ],
  { description: 'pending, or approved with the device credential (answered once)' },
);
export const Pending = Type.Object(
  { id: S, name: S, client: S, model: S, status: S, device_id: Nullable(S), created_at: S, expires_in: Type.Integer() },
  { description: 'a registration awaiting approval' },
);
export const Device = Type.Object(
  {
    ...DeviceSync.Device.properties,
    status: Type.Union([Type.Literal('active'), Type.Literal('awaiting_device')], { description: 'whether it holds a credential' }),
    sync_key_issued_at: Nullable(S),
    kobo: Type.Optional(Type.Object({ books: Type.Union([Type.Literal('all'), Type.Literal('shelves')]), address: Type.Boolean() })),
  },
  { description: 'a device (never its credential)' },
);
export const DeviceList = Type.Object({ devices: Type.Array(Device) });
const KosyncSetup = Type.Object({ server: S, username: Nullable(S), password: S }, { description: "what to type in KOReader's Progress sync" });
const KoboSetup = { kobo_url: Type.Optional(S), kobo_config: Type.Optional(Type.Object({ file: S, section: S, line: S })) };
export const Approved = Type.Object({ message: S, device: Device, sync_key: Type.Optional(S), kosync: Type.Optional(KosyncSetup), ...KoboSetup });
export const SyncKey = Type.Object({ device_id: S, sync_key: S, issued_at: S, kosync: KosyncSetup }, { description: 'a new sync key, shown once' });
export const Shelves = Type.Object({ device_id: S, shelves: Type.Array(Type.Object({ collection_id: S })) });
export const ShelfAdded = Type.Object({ message: S, collection_id: S });
export const QueueStats = Type.Object({ devices: Type.Array(Type.Unknown()), pending: Type.Integer(), failed: Type.Integer() });
export const QueueEntry = Type.Object({ ...DeviceSync.QueueEntry.properties }, { description: 'something waiting for a device' });
export const QueueList = Type.Object({ device_id: Type.Optional(S), entries: Type.Array(QueueEntry) });
export const QueueCleared = Type.Object({ message: S, removed: Type.Integer() });
export const Acked = Type.Object({ removed: Type.Integer(), failed: Type.Integer() });
export const Whoami = Type.Object({ device_id: S, user_id: S, name: S });
export const Sidecar = Type.Object({ books: Type.Record(S, Type.Unknown()), collections: Type.Array(Type.Unknown()) }, { description: 'the reader plugin’s configuration' });
export const KoboCreated = Type.Object({ message: S, device: Device, books: Type.Unknown(), kobo_url: S, kobo_config: Type.Object({ file: S, section: S, line: S }) });
export const KoboToken = Type.Object({ device_id: S, issued_at: S, kobo_url: S, kobo_config: Type.Object({ file: S, section: S, line: S }) });
export const KoboSettings = Type.Object({ device_id: S, books: Type.Unknown() });
export const NameBody = Type.Object({ name: Type.Optional(Type.Unknown()) });
export const ShelfBody = Type.Object({ collection_id: Type.Optional(Type.Unknown()) });
export const CreateBody = Type.Object({ name: Type.Optional(Type.Unknown()), model: Type.Optional(Type.Unknown()), books: Type.Optional(Type.Unknown()) });
export const SettingsBody = Type.Object({ books: Type.Optional(Type.Unknown()) });
