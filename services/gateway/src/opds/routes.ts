// The OPDS catalog for reader apps, under /opds and again under /opds/key/<key> for apps that drop
// credentials on image and download requests: OPDS 1.2 feeds, the files and pages they link, and
// OPDS 2.0 under <base>/v2. Feeds come from the gateway's read models only (no bus call per feed),
// filtered by the caller's library access, and are cached by the projections' positions, the access
// and the URL. Paths and page sizes: docs/decisions.md, "OPDS and the live channel".
import type { FastifyInstance } from 'fastify';
import { atomFeeds } from './atom-routes';
import { feedKit, type OpdsDeps } from './deps';
import { jsonFeeds } from './json-routes';
import { mediaRoutes } from './media-routes';
import { OpdsQueries } from './queries';
import { readerAuth } from './reader-auth';
import { OPDS_ROOT } from './request';
import { keyParam } from './schemas';

export function opdsRoutes(app: FastifyInstance, deps: OpdsDeps): void {
  const requireReader = readerAuth(deps.auth, deps.identity, deps.verified, deps.failures);
  const queries = new OpdsQueries(deps.reads.db);
  const tree = async (sub: FastifyInstance) => {
    sub.addHook('onRequest', requireReader);
    atomFeeds(sub, feedKit(deps.reads, queries, deps.streams), deps.origins);
    mediaRoutes(sub, deps);
    jsonFeeds(sub, feedKit(deps.reads, queries, deps.streams));
  };
  void app.register(tree, { prefix: OPDS_ROOT });
  void app.register(
    async (sub: FastifyInstance) => {
      sub.addHook('onRoute', keyParam);
      await tree(sub);
    },
    { prefix: `${OPDS_ROOT}/key/:key` },
  );
}
