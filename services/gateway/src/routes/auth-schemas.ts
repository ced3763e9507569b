// Route schemas of /api/auth/* and /api/system/*: they decide only what the spec calls binding
// (a field of the wrong JSON type, a body that is not an object, a malformed user id); identity
// keeps the validation rules, their order and their messages. The error handler maps a refusal to
// `invalid request` (or the route's `paramsFailure`).
import Type from 'typebox';

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
