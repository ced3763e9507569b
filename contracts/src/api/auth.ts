// Route schemas of /api/auth/* and /api/system/*: they decide only what the spec calls binding
// (a field of the wrong JSON type, a body that is not an object, a malformed user id); identity
// keeps the validation rules, their order and their messages. The error handler maps a refusal to
// `invalid request` (or the route's `paramsFailure`).
import Type from 'typebox';
import * as Identity from '../identity/index';
import { serviceBody } from './schemas';

/** a text field as the binder sees it: absent and null both mean "not given" */
const Text = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const textFields = <K extends string>(...names: K[]) => Type.Object(Object.fromEntries(names.map((n) => [n, Text])) as Record<K, typeof Text>);

export const RegisterBody = textFields('email', 'username', 'password', 'first_name', 'last_name', 'role');
export const LoginBody = textFields('login', 'password');
export const RefreshBody = Type.Object({ refresh_token: Type.Optional(Type.String()) });
/**
 * The profile's text fields, and `share_statistics` (decision 120): any JSON value here, identity
 * answers a non-boolean with its own message (as it words every other field's rule).
 */
export const ProfileBody = Type.Object({
  ...textFields('username', 'email', 'first_name', 'last_name', 'theme', 'timezone', 'language', 'role').properties,
  share_statistics: Type.Optional(Type.Unknown({ description: 'true to let admins see your reading statistics, false to stop' })),
});
export const FieldBody = { theme: textFields('theme'), username: textFields('username'), email: textFields('email') } as const;
export const PasswordBody = textFields('current_password', 'new_password', 'confirm_password');
/** a JSON number (identity checks it is an integer in range); a string is not one, `"5"` included */
export const MaxDevicesBody = Type.Object({ max_devices: Type.Optional(Type.Union([Type.Number(), Type.Null()])) });
/** settings and config: any object; identity checks each key and value */
export const ObjectBody = Type.Record(Type.String(), Type.Unknown());

export const UserIdParams = Type.Object({ user_id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }) });

// Answers
export const AuthResponse = Type.Object(
  {
    access_token: Type.String({ description: 'the session token (a JWT)' }),
    refresh_token: Type.Optional(Type.String()),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'seconds' }),
    user: Identity.UserProfile,
  },
  { description: 'a session (the cookie `token` is set too)' },
);
export const UserListing = Type.Array(Identity.UserRecord, { description: 'every user, with their device count' });
export const Settings = Type.Object({ settings: Type.Array(Identity.SettingEntry) }, { description: 'the system settings with their metadata' });
export const SettingsUpdated = Type.Object({ message: Type.String(), settings: Type.Array(Identity.SettingEntry) });
export const Config = Type.Object({ config: Type.Record(Type.String(), Type.String()) }, { description: 'the raw system configuration' });
export const ConfigUpdated = Type.Object({ message: Type.String(), config: Type.Record(Type.String(), Type.String()) });
export const SignedOutOthers = Type.Object({ message: Type.String(), signed_out: Type.Integer() });
export const SessionList = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        id: Type.String(),
        client: Type.String({ description: 'the User-Agent that signed in' }),
        started_at: Type.String(),
        last_used_at: Type.String(),
        expires_at: Type.String(),
        current: Type.Boolean({ description: 'the session making this request' }),
      }),
    ),
  },
  { description: "the caller's signed-in sessions" },
);
export const KeyState = Type.Object(
  { exists: Type.Boolean(), created_at: Type.Union([Type.String(), Type.Null()]) },
  { description: 'whether you have a reader key (never the key)' },
);
export const NewKey = Type.Object(
  { key: Type.String(), created_at: Type.String(), opds_path: Type.String(), opds_url: Type.Optional(Type.String()) },
  { description: 'a new reader key, shown once, with the catalog address that carries it' },
);
export const SsoConfig = Type.Object(
  { enabled: Type.Boolean(), only: Type.Boolean(), label: Type.String() },
  { description: 'whether single sign-on is on, its button label, and whether the password form is hidden' },
);
export const SsoLinks = Type.Object(
  { enabled: Type.Boolean(), label: Type.String(), linked: Type.Boolean(), linked_at: Type.Union([Type.String(), Type.Null()]), has_password: Type.Boolean() },
  { description: 'your link to the single sign-on provider, and whether you have a password of your own' },
);
export const Grants = Type.Object({ user_id: Type.String(), all_libraries: Type.Boolean(), library_ids: Type.Array(Type.String()) }, { description: "a user's library access" });
export const Projection = Type.Object({
  name: Type.String(),
  source: Type.String(),
  version: Type.Integer(),
  position: Type.Number(),
  rebuilding: Type.Boolean(),
  rebuilt_at: Type.Union([Type.String(), Type.Null()]),
});
export const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  all_libraries: Type.Boolean(),
  library_ids: Type.Array(Type.String()),
  expires_at: Type.String(),
  created_at: Type.String(),
  invited_by: Type.String(),
});
export const Invitations = Type.Object({ invitations: Type.Array(Invitation) });
export const InvitationOffer = Type.Object({ email: Type.String(), role: Type.String(), expires_at: Type.String() });
export const MailStatus = Type.Object({ configured: Type.Boolean(), max_attachment_bytes: Type.Integer() });
export const EreaderAddress = Type.Object({ address: Type.String() });
export const SendList = Type.Object({ data: Type.Array(Identity.BookSend) });
export const SendManyBody = serviceBody({ media_item_ids: 'the media items (at most 100)' });
export const SentMany = Type.Object({
  message: Type.String(),
  data: Type.Array(Type.Object({ media_item_id: Type.String(), status: Type.Integer(), error: Type.Optional(Type.String()), send: Type.Optional(Identity.BookSend) })),
});
export const GrantsBody = serviceBody({ all_libraries: 'every library', library_ids: 'these libraries' });
export const Granted = Type.Object({ message: Type.String(), ...Grants.properties });
export const PermissionsBody = serviceBody({ can_edit_metadata: 'true: may edit metadata and covers' });
export const Permitted = Type.Object({ message: Type.String(), user_id: Type.String(), can_edit_metadata: Type.Boolean() });
export const Projections = Type.Object({ data: Type.Array(Projection) });
