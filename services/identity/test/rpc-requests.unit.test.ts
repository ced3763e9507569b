// Identity's operations: a request is checked once against its operation's schema at the service,
// and a malformed one is refused there (invalid_request) before any handler or store is reached.
import { describe, expect, it } from 'vitest';
import { Identity, Messages } from '@bindery/contracts';
import { requestChecks } from '@bindery/platform';
import { endpoints, handlers } from '../src/handlers/rpc';
import type { Ctx } from '../src/handlers/context';

// A context with nothing in it: a refused request must never reach a handler (one that did would
// fail on it, and the answer would not be the schema's refusal).
const refusedOnly = endpoints({} as Ctx);
const caller = { user_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', role: 'user' as const };
const invalid = { ok: false, error: { code: 'invalid_request', message: Messages.invalidRequest } };

describe("identity's operations", () => {
  it('every operation has a request schema, a result schema, a handler and an endpoint', () => {
    const names = Object.keys(Identity.IdentityOperations).sort();
    expect(names.length).toBeGreaterThan(40);
    expect(Object.keys(handlers).sort()).toEqual(names);
    expect(Object.keys(refusedOnly).sort()).toEqual(names);
    for (const name of names) {
      const op = Identity.IdentityOperations[name as Identity.IdentityOp];
      expect(op.request, name).toBeTypeOf('object');
      expect(op.result, name).toBeTypeOf('object');
    }
  });

  it.each([
    ['reader-key', { caller, action: 'delete-everything' }],
    ['reader-key', { action: 'get' }],
    ['reader-key-verify', { key: 'k'.repeat(257) }],
    ['refresh', { refresh_token: 42 }],
    ['refresh', {}],
    ['login', { input: 'ann:secret' }],
    ['profile-get', { caller: { user_id: caller.user_id, role: 'root' } }],
    ['field-set', { caller, field: 'role', input: { role: 'admin' } }],
    ['sends-claim', { limit: 0, lease_ms: 60_000 }],
    ['sends-claim', { limit: 5, lease_ms: 10 }],
    ['send-result', { send_id: 's', ok: true, permanent: false, detail: 'd'.repeat(1001) }],
    ['kosync-verify', { login: 'ann' }],
    ['oidc-begin', { caller: null, purpose: 'steal', redirect_uri: 'https://x/cb', return_to: '/' }],
    ['session-revoke', { caller, session_id: null }],
    ['users-list', null],
    ['setup-status', 'status please'],
  ] as const)('%s refuses a malformed request with invalid_request: %j', async (op, body) => {
    expect(await refusedOnly[op]!(body)).toEqual(invalid);
  });

  it('a well-formed request passes the schema; text with a NUL is then refused with the field named', async () => {
    const checks = requestChecks(Identity.IdentityOperations);
    expect(checks['reader-key']({ caller, action: 'get' })).toBeNull();
    expect(checks['sends-claim']({ limit: 5, lease_ms: 60_000 })).toBeNull();
    expect(checks.login({ input: { login: 'ann', password: 'secret-1' } })).toBeNull();
    expect(checks['reader-key']({ caller, action: 'nope' })).toEqual(invalid.error);
    const r = await refusedOnly.login!({ input: { login: 'a\u0000nn', password: 'secret-1' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'validation' } });
    expect((r as { error: { message: string } }).error.message).toMatch(/^login /);
  });
});
