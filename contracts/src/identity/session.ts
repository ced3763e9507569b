// A session as sign-in answers it (register, login, refresh, an invitation accepted, single sign-on).
import Type from 'typebox';
import { UserProfile } from './events';

export const Session = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
});
export type Session = Type.Static<typeof Session>;

export const AuthResult = Type.Object({ session: Session, user: UserProfile });
export type AuthResult = Type.Static<typeof AuthResult>;
