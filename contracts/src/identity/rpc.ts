import Type from 'typebox';
import { Role, UserProfile } from './events';
import { AuthResult } from './session';
import { ReaderAuthRequests, ReaderAuthResults } from './reader-auth';
import { KosyncRequests, KosyncResults } from './kosync';
import { OidcRequests, OidcResults } from './oidc';
import { MailRequests, MailResults } from './mail-rpc';
import { operations, type RequestOf, type ResultOf } from '../rpc';

export { AuthResult, Session } from './session';

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

const Message = Type.Object({ message: Type.String() });
const Settings = Type.Array(SettingEntry);
const Config = Type.Record(Type.String(), Type.String());

/** What each operation answers on success (a failure is always a Failure: code and message). */
export const IdentityResults = {
  register: AuthResult,
  login: AuthResult,
  refresh: AuthResult,
  logout: Message,
  'session-revoke': Message,
  'sessions-revoke-others': Type.Object({ message: Type.String(), signed_out: Type.Integer() }),
  'profile-get': UserProfile,
  'profile-update': Message,
  'field-set': Message,
  'password-change': Message,
  'user-delete': Message,
  'users-list': Type.Array(UserRecord),
  'max-devices-set': Message,
  'permissions-set': Type.Object({ message: Type.String(), user_id: Type.String(), can_edit_metadata: Type.Boolean() }),
  'library-access-set': Type.Object({ message: Type.String(), user_id: Type.String(), all_libraries: Type.Boolean(), library_ids: Type.Array(Type.String()) }),
  'settings-get': Type.Object({ settings: Settings }),
  'settings-put': Type.Object({ message: Type.String(), settings: Settings }),
  'config-get': Type.Object({ config: Config }),
  'config-put': Type.Object({ message: Type.String(), config: Config }),
  'setup-status': SetupStatus,
  ...ReaderAuthResults,
  ...KosyncResults,
  ...MailResults,
  ...OidcResults,
} as const;

/**
 * Identity's operations: each name with its request schema (checked once, at the service) and its
 * result schema (what the handler is typed to answer and the gateway's client returns).
 */
export const IdentityOperations = operations(IdentityRequests, IdentityResults);
export type IdentityOperations = typeof IdentityOperations;
export type IdentityOp = keyof IdentityOperations & string;
export type IdentityRequest<K extends IdentityOp> = RequestOf<IdentityOperations, K>;
export type IdentityResult<K extends IdentityOp> = ResultOf<IdentityOperations, K>;
