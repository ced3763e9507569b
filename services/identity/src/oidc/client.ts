// The OpenID client (openid-client, a certified relying party): the provider's discovery document
// kept for an hour, the authorization address with PKCE, state and nonce, and the code exchange
// with every check of the ID token (issuer, audience, expiry, nonce, and its signature by the
// provider's JWKS: non-repudiation checks on).
import * as oidc from 'openid-client';
import type { Logger } from '@bindery/platform';
import type { Identity } from '@bindery/contracts';
import type { OidcSettings } from './config';
import type { Transaction } from './transaction';

const KEEP_MS = 3600_000;
/** after a failed discovery, the next sign-in asks again at once (a provider coming back is seen at the next click) */
const TIMEOUT_SECONDS = 10;

/** A refusal with the page's reason; `detail` goes to the log only. */
export class OidcRefusal extends Error {
  constructor(
    readonly problem: Identity.OidcProblem,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface Verified {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

export class OidcClient {
  private config: { value: oidc.Configuration; at: number } | null = null;
  private pending: Promise<oidc.Configuration> | null = null;

  constructor(
    readonly settings: OidcSettings,
    private readonly log: Logger,
  ) {}

  /** The provider's configuration, discovered (and kept) or an OidcRefusal('unavailable'). */
  async configuration(now = Date.now()): Promise<oidc.Configuration> {
    if (this.config && now - this.config.at < KEEP_MS) return this.config.value;
    this.pending ??= this.discover().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async discover(): Promise<oidc.Configuration> {
    const s = this.settings;
    try {
      // client_secret_basic: the method every provider must accept (RFC 6749 2.3.1); no secret: a public client, PKCE alone
      const auth = s.clientSecret ? oidc.ClientSecretBasic(s.clientSecret) : oidc.None();
      const c = await oidc.discovery(s.issuer, s.clientId, undefined, auth, {
        // a plain-http issuer is the administrator's choice (a provider on the same private network)
        execute: s.issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
        timeout: TIMEOUT_SECONDS,
      });
      c.timeout = TIMEOUT_SECONDS;
      oidc.enableNonRepudiationChecks(c);
      this.config = { value: c, at: Date.now() };
      return c;
    } catch (e) {
      throw new OidcRefusal('unavailable', `discovery of ${s.issuer.href} failed: ${describe(e)}`);
    }
  }

  async authorizationUrl(t: Pick<Transaction, 'state' | 'nonce' | 'verifier' | 'redirect_uri'>): Promise<string> {
    const c = await this.configuration();
    const challenge = await oidc.calculatePKCECodeChallenge(t.verifier);
    return oidc
      .buildAuthorizationUrl(c, {
        redirect_uri: t.redirect_uri,
        scope: this.settings.scope,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: t.state,
        nonce: t.nonce,
      })
      .toString();
  }

  /** The provider's answer at the callback, exchanged and checked: who signed in, with their claims (userinfo's where the ID token lacks them). */
  async finish(t: Transaction, callbackUrl: string, wantUserinfo: (claims: Record<string, unknown>) => boolean): Promise<Verified> {
    const c = await this.configuration();
    // the redirect_uri sent with the code is the one the sign-in began with, whatever Host the answer came by
    const current = new URL(t.redirect_uri);
    current.search = new URL(callbackUrl).search;
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(c, current, { pkceCodeVerifier: t.verifier, expectedState: t.state, expectedNonce: t.nonce, idTokenExpected: true });
    } catch (e) {
      if (e instanceof oidc.AuthorizationResponseError) throw new OidcRefusal('denied', `the provider answered ${e.error}: ${e.error_description ?? ''}`);
      if (isNetwork(e)) throw new OidcRefusal('unavailable', `the token request failed: ${describe(e)}`);
      throw new OidcRefusal('failed', describe(e));
    }
    const claims = { ...(tokens.claims() ?? {}) } as Record<string, unknown>;
    const subject = claims.sub;
    if (typeof subject !== 'string' || subject === '' || subject.length > 255) throw new OidcRefusal('failed', 'the ID token has no usable sub');
    if (tokens.access_token && c.serverMetadata().userinfo_endpoint && wantUserinfo(claims)) {
      try {
        const info = await oidc.fetchUserInfo(c, tokens.access_token, subject);
        for (const [k, v] of Object.entries(info)) if (!(k in claims)) claims[k] = v;
      } catch (e) {
        if (isNetwork(e)) throw new OidcRefusal('unavailable', `the userinfo request failed: ${describe(e)}`);
        throw new OidcRefusal('failed', `userinfo: ${describe(e)}`);
      }
    }
    return { issuer: c.serverMetadata().issuer, subject, claims };
  }

  /** The provider's end-session address (RP-initiated logout), or null where it offers none or cannot be reached. */
  async endSessionUrl(postLogoutRedirect: string): Promise<string | null> {
    try {
      const c = await this.configuration();
      if (!c.serverMetadata().end_session_endpoint) return null;
      return oidc.buildEndSessionUrl(c, { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirect }).toString();
    } catch (e) {
      this.log.warn({ err: describe(e) }, 'single sign-on: no end-session address');
      return null;
    }
  }
}

const describe = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${e.message}${cause}`;
};

/** fetch's own failures (refused, reset, DNS, timeout), not the provider's answers */
const isNetwork = (e: unknown): boolean => {
  if (!(e instanceof Error)) return false;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
  if (e instanceof TypeError && /fetch failed/i.test(e.message)) return true;
  return e.cause instanceof Error && isNetwork(e.cause);
};
