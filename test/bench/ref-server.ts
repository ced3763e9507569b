// The reference: a bare fastify 5 route returning a profile-sized JSON object, in its own process.
import Fastify from 'fastify';

const profile = {
  id: '5f0c6b0e-6d1f-4e7a-9a53-2b1f0f7c9d11',
  email: 'bench@example.com',
  username: 'bench',
  first_name: '',
  last_name: '',
  role: 'user',
  theme: 'tokyo-night',
};

const app = Fastify({ logger: false });
app.get('/ref', async () => profile);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`ref listening at ${url}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
