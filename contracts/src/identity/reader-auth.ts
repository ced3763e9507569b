// Requests for reader-app credentials (OPDS): HTTP Basic checked as a login without a session,
// and each user's reader key (kept hashed by identity) for apps that put a secret in the path.
import Type from 'typebox';
import { Role } from './events';

// the same shape as rpc.ts's Caller, declared here because rpc.ts spreads this module at load time
const Caller = Type.Object({ user_id: Type.String(), role: Role, jti: Type.Optional(Type.String()), exp: Type.Optional(Type.Integer()) });

export const ReaderAuthRequests = {
  /** input: `login`, `password`; answers `{user_id, role}` under the login lock rules */
  'credentials-verify': Type.Object({ input: Type.Record(Type.String(), Type.Unknown()) }),
  /** the caller's own key: `get` (whether one exists), `create` (answers it once), `revoke` */
  'reader-key': Type.Object({ caller: Caller, action: Type.Union([Type.Literal('get'), Type.Literal('create'), Type.Literal('revoke')]) }),
  /** answers `{user_id, role}` of the key's owner, or 401 */
  'reader-key-verify': Type.Object({ key: Type.String({ maxLength: 256 }) }),
} as const;

/** Who a credential, a reader key or a KOReader key belongs to. */
export const Verified = Type.Object({ user_id: Type.String(), role: Role });
export type Verified = Type.Static<typeof Verified>;

/** The caller's reader key: whether one exists and since when; the key itself only in the answer that created it. */
export const ReaderKeyInfo = Type.Object({ exists: Type.Boolean(), created_at: Type.Union([Type.String(), Type.Null()]), key: Type.Optional(Type.String()) });
export type ReaderKeyInfo = Type.Static<typeof ReaderKeyInfo>;

export const ReaderAuthResults = {
  'credentials-verify': Verified,
  'reader-key': ReaderKeyInfo,
  'reader-key-verify': Verified,
} as const;
