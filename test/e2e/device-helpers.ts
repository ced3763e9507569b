// Shared pieces of the device end-to-end tests: a device registered, approved by its user and
// holding its credential, and requests made with that credential.
import { expect } from 'vitest';
import type { Account, Call } from './helpers';
import type { Req } from '../support/http';

export interface Enrolled {
  device_id: string;
  token: string;
  name: string;
  user_code: string;
  /** the kosync sync key shown at approval */
  sync_key: string;
}

export async function registerDevice(call: Call, name: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', '/api/devices/register', { body: { name, client: 'koreader', model: 'Kobo Clara', ...extra } });
  expect(r.status, r.text).toBe(201);
  return r.json as { device_code: string; user_code: string; auth_url: string; poll_interval: number; expires_in: number };
}

export const poll = (call: Call, code: string) => call('POST', '/api/devices/register/status', { body: { device_code: code } });

/** Registers a device, has `user` approve it, and collects its credential. */
export async function enroll(call: Call, user: Account, name = 'Reader'): Promise<Enrolled> {
  const reg = await registerDevice(call, name);
  const a = await call('POST', `/api/devices/${reg.user_code}/approve`, { token: user.token });
  expect(a.status, a.text).toBe(200);
  const s = await poll(call, reg.device_code);
  expect(s.status, s.text).toBe(200);
  expect(s.json.status).toBe('approved');
  return { device_id: s.json.device_id, token: s.json.device_token, name, user_code: reg.user_code, sync_key: a.json.sync_key };
}

/** A request carrying a device credential. */
export const asDevice = (token: string, r: Req = {}): Req => ({ ...r, headers: { ...(r.headers ?? {}), authorization: `Device ${token}` } });
