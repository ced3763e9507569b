// What a read route needs: the caller's library access and the positions its answer depends on,
// the views, and a cache of rendered answers keyed by those positions (a change is a new key).
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FastifyReply } from 'fastify';
import type { Identity, Result } from '@bindery/contracts';
import type { Db } from '@bindery/platform';
import { accessKey, IdentityView, type Access } from './access';
import { CatalogView } from './catalog-view';
import type { ReadModels } from './read-model';
import type { GatewayDb } from './database';

export interface ReadContext {
  positions: Record<string, number>;
  access: Access;
  /** cache-key prefix: what the answer depends on */
  key: string;
}

export class Reads {
  readonly catalog: CatalogView;
  readonly identity: IdentityView;
  // kept encoded: a page is sent many times and encoded once
  private pages = new LRUCache<string, Buffer>({ max: 5000, maxSize: 24 * 1024 * 1024, sizeCalculation: (v) => v.length || 1 });
  private rendering = new Map<string, Promise<Result<Buffer>>>();

  constructor(
    readonly db: Db<GatewayDb>,
    readonly models: ReadModels,
  ) {
    this.catalog = new CatalogView(db, () => models.position('catalog'));
    this.identity = new IdentityView(db);
  }

  async context(caller: Identity.Caller): Promise<ReadContext> {
    const positions = this.models.current();
    const access = await this.identity.access(caller, positions.identity ?? 0);
    return { positions, access, key: `${positions.catalog ?? 0}|${accessKey(access)}|${caller.role}` };
  }

  /** A rendered answer from the cache, or rendered by `render` and kept. */
  async cached(key: string, render: () => Promise<Result<string>>): Promise<Result<Buffer>> {
    const hit = this.pages.get(key);
    if (hit !== undefined) return { ok: true, value: hit };
    // requests for the same key while it renders wait for that one rendering
    let pending = this.rendering.get(key);
    if (!pending) {
      pending = render()
        .then((r): Result<Buffer> => {
          if (!r.ok) return r;
          const body = Buffer.from(r.value);
          this.pages.set(key, body);
          return { ok: true, value: body };
        })
        .finally(() => this.rendering.delete(key));
      this.rendering.set(key, pending);
    }
    return pending;
  }
}

// a kept answer's entity tag, made once per kept Buffer (it goes when the answer leaves the cache)
const tags = new WeakMap<Buffer, string>();
const tagOf = (body: Buffer): string => {
  let tag = tags.get(body);
  if (tag === undefined) {
    tag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    tags.set(body, tag);
  }
  return tag;
};

/**
 * A JSON answer. A kept one (a Buffer of `Reads.cached`) carries its entity tag, and a GET whose
 * If-None-Match names it is answered 304 without a body; the pages key what they keep by the tag
 * instead of hashing the answer's text on every request.
 */
export const sendJson = (reply: FastifyReply, body: string | Buffer, status = 200) => {
  if (status === 200 && Buffer.isBuffer(body)) {
    const tag = tagOf(body);
    reply.header('etag', tag);
    if (reply.request.method === 'GET' && reply.request.headers['if-none-match'] === tag) return reply.code(304).send();
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
};
