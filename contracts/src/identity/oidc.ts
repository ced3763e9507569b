// OpenID Connect sign-in (issue 47): identity holds the client (discovery, PKCE, state and nonce,
// the ID token's checks) and decides who a provider's `sub` is; the gateway only carries the
// browser's redirects and the sealed transaction cookie between them.
import Type from 'typebox';
import { Role } from './events';

// the shape of rpc.ts's Caller, declared here because rpc.ts spreads this module at load time
const Caller = Type.Object({ user_id: Type.String(), role: Role, jti: Type.Optional(Type.String()), exp: Type.Optional(Type.Integer()) });
const OptCaller = Type.Union([Caller, Type.Null()]);
const Url = Type.String({ maxLength: 8192 });

export const OidcRequests = {
  /** whether single sign-on is configured, the button's label, and whether the password form is hidden */
  'oidc-config': Type.Object({}),
  /** the provider's authorization address and the sealed transaction (state, nonce, PKCE verifier) the browser keeps */
  'oidc-begin': Type.Object({
    caller: OptCaller,
    purpose: Type.Union([Type.Literal('sign-in'), Type.Literal('link')]),
    redirect_uri: Url,
    return_to: Type.String({ maxLength: 2048 }),
  }),
  /** the provider's answer (the whole callback address) checked against the transaction: a session, a link or a refusal */
  'oidc-finish': Type.Object({ caller: OptCaller, transaction: Url, callback_url: Url, client: Type.Optional(Type.String()) }),
  /** the caller's link to the provider, and whether they have a password of their own */
  'oidc-links': Type.Object({ caller: Caller }),
  /** the provider's end-session address (RP-initiated logout), when it offers one */
  'oidc-logout-url': Type.Object({ post_logout_redirect_uri: Url }),
} as const;

export const OidcConfig = Type.Object({ enabled: Type.Boolean(), only: Type.Boolean(), label: Type.String() });
export type OidcConfig = Type.Static<typeof OidcConfig>;

/** POST /api/auth/login's refusal with OIDC_ONLY */
export const OIDC_ONLY_MESSAGE = 'password sign-in is turned off on this server: sign in through the single sign-on provider';

/** Why a sign-in through the provider did not go through: each has a fixed message (OIDC_PROBLEMS). */
export const OIDC_PROBLEMS = {
  unavailable: 'The sign-in provider cannot be reached right now. Please try again later.',
  failed: "The sign-in provider's answer could not be verified, so you were not signed in. Please start again.",
  expired: 'This sign-in was not started in this browser, or took too long. Please start again.',
  denied: 'The sign-in provider did not sign you in.',
  unknown_account:
    'Your account at the sign-in provider is not linked to an account on this server. Ask an administrator to create your account; if you already have one, sign in with your password and link it from your profile.',
  email_taken:
    'An account with your e-mail address already exists on this server, and accounts are never joined by e-mail alone. Sign in with your password and link your provider account from your profile.',
  linked_elsewhere: 'That account at the sign-in provider is already linked to another account on this server.',
  no_email: 'The sign-in provider did not give an e-mail address, which a new account needs. Ask an administrator to create your account.',
  not_configured: 'Single sign-on is not configured on this server.',
  no_address: 'This server does not know its public address for the sign-in provider to send you back to: the administrator sets PUBLIC_URL.',
} as const;
export type OidcProblem = keyof typeof OIDC_PROBLEMS;
export const isOidcProblem = (v: unknown): v is OidcProblem => typeof v === 'string' && Object.hasOwn(OIDC_PROBLEMS, v);

/** A problem's name (a key of OIDC_PROBLEMS). */
const Problem = Type.Unsafe<OidcProblem>(Type.String());

export const OidcBegun = Type.Object({ url: Type.String(), transaction: Type.String() });
export type OidcBegun = Type.Static<typeof OidcBegun>;

export const OidcFinished = Type.Union([
  Type.Object({
    outcome: Type.Literal('signed-in'),
    return_to: Type.String(),
    session: Type.Object({ access_token: Type.String(), refresh_token: Type.String(), token_type: Type.Literal('Bearer'), expires_in: Type.Number() }),
    user: Type.Unknown(),
  }),
  Type.Object({ outcome: Type.Literal('linked'), return_to: Type.String() }),
  Type.Object({ outcome: Type.Literal('refused'), problem: Problem }),
]);
export type OidcFinished = Type.Static<typeof OidcFinished>;

export const OidcLinks = Type.Object({
  enabled: Type.Boolean(),
  label: Type.String(),
  linked: Type.Boolean(),
  linked_at: Type.Union([Type.String(), Type.Null()]),
  has_password: Type.Boolean(),
});
export type OidcLinks = Type.Static<typeof OidcLinks>;

export const OidcResults = {
  'oidc-config': OidcConfig,
  /** the provider's address and the sealed transaction, or why it cannot begin */
  'oidc-begin': Type.Union([OidcBegun, Type.Object({ problem: Problem })]),
  'oidc-finish': OidcFinished,
  'oidc-links': OidcLinks,
  'oidc-logout-url': Type.Object({ url: Type.Union([Type.String(), Type.Null()]) }),
} as const;
