// Single sign-on's settings, from the environment (issue 47). Unset OIDC_ISSUER_URL or
// OIDC_CLIENT_ID: no single sign-on, and every OIDC_* variable is ignored.
export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string | undefined;
  scope: string;
  label: string;
  /** a value of the `groups` claim that makes an admin; null: roles are not taken from the provider */
  adminGroup: string | null;
  /** an unknown `sub` gets an account at its first sign-in */
  autoCreate: boolean;
  /** the password form is hidden and POST /api/auth/login refuses */
  only: boolean;
}

const truthy = (v: string | undefined): boolean => /^(1|true|yes|on)$/i.test((v ?? '').trim());

export function oidcFromEnv(env: NodeJS.ProcessEnv = process.env): OidcSettings | null {
  const issuer = env.OIDC_ISSUER_URL?.trim();
  const clientId = env.OIDC_CLIENT_ID?.trim();
  if (!issuer || !clientId) return null;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`OIDC_ISSUER_URL is not an address: ${issuer}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('OIDC_ISSUER_URL must be an https:// (or http://) address');
  const adminGroup = env.OIDC_ADMIN_GROUP?.trim() || null;
  const scopes = env.OIDC_SCOPES?.trim()
    .split(/[\s,]+/)
    .filter(Boolean) ?? ['openid', 'profile', 'email', ...(adminGroup ? ['groups'] : [])];
  if (!scopes.includes('openid')) scopes.unshift('openid');
  return {
    issuer: url,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET || undefined,
    scope: scopes.join(' '),
    label: (env.OIDC_BUTTON_LABEL?.trim() || 'Sign in with single sign-on').slice(0, 100),
    adminGroup,
    autoCreate: truthy(env.OIDC_AUTO_CREATE),
    only: truthy(env.OIDC_ONLY),
  };
}
