// Device registrations that wait too long: with a two-second lifetime, an unapproved registration
// answers 410 to its poll and can no longer be approved (its page says it does not exist).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { poll, registerDevice } from './device-helpers';
import { api, expectError, register, type Call } from './helpers';

const modes = await availableModes();
const TTL = 2;

for (const mode of modes) {
  describe(`device registration expiry (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    beforeAll(async () => {
      b = await startBindery(mode, { DEVICE_REGISTRATION_TTL_SECONDS: String(TTL), DEVICE_POLL_INTERVAL_SECONDS: '1' });
      call = api(b);
    }, 240_000);
    afterAll(async () => b?.stop());

    it('answers 410 after expiry, and the expired registration cannot be approved', async () => {
      const user = await register(call);
      const reg = await registerDevice(call, 'Slow reader');
      expect(reg.expires_in).toBe(TTL);
      expect(reg.poll_interval).toBe(1);
      await new Promise((r) => setTimeout(r, TTL * 1000 + 500));
      expectError(await poll(call, reg.device_code), 410, 'device registration expired');
      expectError(await call('POST', `/api/devices/${reg.user_code}/approve`, { token: user.token }), 404, 'device registration not found');
      expectError(await call('GET', `/api/devices/pending/${reg.user_code}`, { token: user.token }), 404, 'device registration not found');
      const page = await call('GET', reg.auth_url, { cookie: `token=${user.token}` });
      expect(page.status).toBe(404);
      expect(await poll(call, reg.device_code).then((r) => r.status)).toBe(410);
      expect((await call('GET', '/api/devices', { token: user.token })).json.devices).toEqual([]);
    });
  });
}
