// Route schemas of /api/auth/* and /api/system/*: they decide only what the spec calls binding
// (a field of the wrong JSON type, a body that is not an object, a malformed user id); identity
// keeps the validation rules, their order and their messages. The error handler maps a refusal to
// `invalid request` (or the route's `paramsFailure`).
import Type from 'typebox';
import * as Identity from '../identity/index';

/** a text field as the binder sees it: absent and null both mean "not given" */
const Text = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const textFields = <K extends string>(...names: K[]) => Type.Object(Object.fromEntries(names.map((n) => [n, Text])) as Record<K, typeof Text>);

export const RegisterBody = textFields('email', 'username', 'password', 'first_name', 'last_name', 'role');
export const LoginBody = textFields('login', 'password');
export const RefreshBody = Type.Object({ refresh_token: Type.Optional(Type.String()) });
export const ProfileBody = textFields('username', 'email', 'first_name', 'last_name', 'theme', 'timezone', 'role');
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
