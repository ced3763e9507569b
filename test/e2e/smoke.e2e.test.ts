import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { client } from '../support/http';

for (const mode of await availableModes()) {
  describe(`smoke (${mode})`, () => {
    let b: Bindery;
    beforeAll(async () => {
      b = await startBindery(mode);
    });
    afterAll(async () => {
      await b?.stop();
    });

    it('answers liveness and readiness', async () => {
      const http = client(b.url);
      const live = await http('GET', '/healthz');
      expect(live.status).toBe(200);
      expect(live.json).toEqual({ status: 'ok' });
      const ready = await http('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'ready' });
    });

    it('registers the first account as admin and reads its profile with the token', async () => {
      const http = client(b.url);
      const r = await http('POST', '/api/auth/register', { body: { email: 'first@example.com', username: 'first', password: 'passw0rd-one', role: 'user' } });
      expect(r.status).toBe(201);
      expect(r.json.user.role).toBe('admin');
      const p = await http('GET', '/api/auth/profile', { token: r.json.access_token });
      expect(p.status).toBe(200);
      expect(p.json).toEqual({ id: r.json.user.id, email: 'first@example.com', username: 'first', first_name: '', last_name: '', role: 'admin', theme: 'tokyo-night' });
    });
  });
}
