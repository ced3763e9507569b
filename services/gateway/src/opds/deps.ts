// What the OPDS routes are given, and the kit the feed routes of one catalog version share in one
// tree (`/opds` or `/opds/key/<key>`): the read models, the feed queries, the page streams and the
// answer cache.
import type { FastifyRequest } from 'fastify';
import type { Result } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { AuthFailures } from '../http/auth-failures';
import type { Origins } from '../http/origin';
import type { Reader } from '../http/reading-client';
import type { CallCatalog, CallIdentity } from '../http/rpc';
import type { VerifiedCache } from '../http/verified-cache';
import type { CoverSource } from '../files/covers';
import { DashboardView } from '../read-model/dashboard-view';
import type { Reads } from '../read-model/reads';
import { parsePaging, type Paging } from './paging';
import type { OpdsQueries } from './queries';
import { feedCache, queryOf } from './request';
import type { Streams } from './streams';

export interface OpdsDeps {
  /** covers and thumbnails, from the catalog's directory where reachable */
  covers: CoverSource;
  auth: Auth;
  identity: CallIdentity;
  catalog: CallCatalog;
  reads: Reads;
  reading: Reader;
  /** the sign-ins taken on trust, shared with KOReader's stock sync */
  verified?: VerifiedCache;
  /** the budgets of failed credential checks per address and kind (Basic is a password, a key a reader key) */
  failures?: AuthFailures;
  /** which Host may go into absolute addresses (the OpenSearch template) */
  origins: Origins;
  /** the page streams (one per gateway: its render pool's limits hold for every route that renders pages) */
  streams: Streams;
}

export interface FeedKit {
  reads: Reads;
  queries: OpdsQueries;
  streams: Streams;
  dashboard: DashboardView;
  /** a rendered feed from the answer cache (see `feedCache`) */
  cachedFeed: ReturnType<typeof feedCache>;
  now: () => string;
  /** the request's `page` and `per_page` */
  paged: (req: FastifyRequest) => Result<Paging>;
}

export function feedKit(reads: Reads, queries: OpdsQueries, streams: Streams): FeedKit {
  return {
    reads,
    queries,
    streams,
    dashboard: new DashboardView(reads.db),
    cachedFeed: feedCache(reads),
    now: () => new Date().toISOString(),
    paged: (req) => parsePaging(queryOf(req)),
  };
}
