import Type from 'typebox';
import { Role, UserProfile } from './events';
import { ReaderAuthRequests } from './reader-auth';
import { KosyncRequests } from './kosync';
import { OidcRequests } from './oidc';
import { MailRequests } from './mail-rpc';

/** Who is calling, as the gateway authenticated them. Identity re-checks roles against its own state. */
export const Caller = Type.Object({
  user_id: Type.String(),
  role: Role,
  jti: Type.Optional(Type.String()),
  exp: Type.Optional(Type.Integer()),
  /** the admin allowed this user to edit metadata and covers (issue 43); set by the gateway from identity's events, never from a request */
  can_edit_metadata: Type.Optional(Type.Boolean()),
});
export type Caller = Type.Static<typeof Caller>;

/** Who may change an item's metadata and cover: an admin, or a user the admin allowed (issue 43). */
export const mayEditMetadata = (c: { role: string; can_edit_metadata?: boolean }): boolean => c.role === 'admin' || c.can_edit_metadata === true;

export const UserRecord = Type.Object({
  id: Type.String(),
  email: Type.String(),
  username: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role: Role,
  theme: Type.String(),
  timezone: Type.String(),
  max_devices: Type.Integer(),
  device_count: Type.Integer(),
  /** the admin allowed this user to edit metadata and covers (issue 43) */
  can_edit_metadata: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type UserRecord = Type.Static<typeof UserRecord>;

export const Session = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
});
export type Session = Type.Static<typeof Session>;

export const AuthResult = Type.Object({ session: Session, user: UserProfile });
export type AuthResult = Type.Static<typeof AuthResult>;

/** A raw request body: identity validates it, with the spec's messages, in the spec's order. */
const Input = Type.Record(Type.String(), Type.Unknown());
const OptCaller = Type.Union([Caller, Type.Null()]);
const TargetId = Type.Optional(Type.String());

export const IdentityRequests = {
  /** `client`: the User-Agent of what signs in, kept with the session for its owner's list */
  register: Type.Object({ caller: OptCaller, input: Input, client: Type.Optional(Type.String()) }),
  login: Type.Object({ input: Input, client: Type.Optional(Type.String()) }),
  refresh: Type.Object({ refresh_token: Type.String() }),
  logout: Type.Object({ caller: OptCaller, refresh_token: Type.Optional(Type.String()) }),
  /** signs one of the caller's own sessions out (its refresh family and every access token it issued) */
  'session-revoke': Type.Object({ caller: Caller, session_id: Type.String() }),
  /** signs out every session of the caller but the one making the request */
  'sessions-revoke-others': Type.Object({ caller: Caller }),
  'profile-get': Type.Object({ caller: Caller }),
  'profile-update': Type.Object({ caller: Caller, target_id: TargetId, input: Input }),
  'field-set': Type.Object({
    caller: Caller,
    field: Type.Union([Type.Literal('theme'), Type.Literal('username'), Type.Literal('email')]),
    input: Input,
  }),
  'password-change': Type.Object({ caller: Caller, target_id: TargetId, input: Input }),
  'user-delete': Type.Object({ caller: Caller, target_id: TargetId }),
  'users-list': Type.Object({ caller: Caller }),
  'max-devices-set': Type.Object({ caller: Caller, target_id: Type.String(), input: Input }),
  /** input: `can_edit_metadata` (true or false) */
  'permissions-set': Type.Object({ caller: Caller, target_id: Type.String(), input: Input }),
  /** input: `all_libraries` and/or `library_ids` (the gateway has checked the ids name libraries) */
  'library-access-set': Type.Object({ caller: Caller, target_id: Type.String(), input: Input }),
  'settings-get': Type.Object({ caller: Caller }),
  'settings-put': Type.Object({ caller: Caller, input: Input }),
  'config-get': Type.Object({ caller: Caller }),
  'config-put': Type.Object({ caller: Caller, input: Input }),
  'setup-status': Type.Object({}),
  ...ReaderAuthRequests,
  ...KosyncRequests,
  ...MailRequests,
  ...OidcRequests,
} as const;

export type IdentityOp = keyof typeof IdentityRequests;
export type IdentityRequest<K extends IdentityOp> = Type.Static<(typeof IdentityRequests)[K]>;

export const SettingEntry = Type.Object({
  key: Type.String(),
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
  default: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
  type: Type.Union([Type.Literal('integer'), Type.Literal('boolean'), Type.Literal('string')]),
  min: Type.Union([Type.Number(), Type.Null()]),
  max: Type.Union([Type.Number(), Type.Null()]),
  requires_restart: Type.Boolean(),
  category: Type.Union([Type.Literal('scanner'), Type.Literal('general'), Type.Literal('security'), Type.Literal('api'), Type.Literal('sync'), Type.Literal('performance')]),
  group: Type.String(),
  description: Type.String(),
  is_default: Type.Boolean(),
});
export type SettingEntry = Type.Static<typeof SettingEntry>;

export const SetupStatus = Type.Object({
  needs_setup: Type.Boolean(),
  has_admin: Type.Boolean(),
  registration_enabled: Type.Boolean(),
});
export type SetupStatus = Type.Static<typeof SetupStatus>;
