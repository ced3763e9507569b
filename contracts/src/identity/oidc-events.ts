// Identity's events for single sign-on (issue 47).
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });

/**
 * A user's account is linked to an OpenID provider's subject: a sign-in through that provider with
 * this `sub` is this user. Never made from an e-mail address: at the account's first sign-in
 * (OIDC_AUTO_CREATE, `auto-created`) or by the signed-in user's own step from their profile (`self`).
 */
export const OidcLinked = Type.Object({
  user_id: Uuid,
  /** the provider's issuer identifier as its discovery document states it */
  issuer: Type.String({ maxLength: 2048 }),
  /** the provider's `sub` for this person (at most 255 ASCII characters, OpenID Connect Core 2) */
  subject: Type.String({ minLength: 1, maxLength: 255 }),
  how: Type.Union([Type.Literal('auto-created'), Type.Literal('self')]),
});

export const OidcIdentityEvents = {
  'identity.oidc-linked.v1': OidcLinked,
} as const;
