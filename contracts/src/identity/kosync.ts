// Requests for KOReader's stock Progress sync (the kosync protocol): it signs in with a username and
// md5(password) as hex on every request, and its Register button creates an account.
import Type from 'typebox';
import { Verified } from './reader-auth';

export const KosyncRequests = {
  /** `login` (username or e-mail) and `key` (md5 of the password, hex): `{user_id, role}` under the login lock rules, or 401 */
  'kosync-verify': Type.Object({ login: Type.String({ maxLength: 1024 }), key: Type.String({ maxLength: 1024 }) }),
  /** KOReader's Register: `{user_id}` (201), or `exists` / `disabled` failures (the protocol's 2002 / 2005) */
  'kosync-create': Type.Object({ username: Type.String({ maxLength: 1024 }), key: Type.String({ maxLength: 1024 }) }),
} as const;

export const KosyncResults = {
  'kosync-verify': Verified,
  'kosync-create': Type.Object({ user_id: Type.String() }),
} as const;
