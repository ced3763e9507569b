// The request/reply endpoints: the catalog's operations (contracts' CatalogOperations), each request
// checked once against its schema, then handled by the operation's handler, typed to its result.
import { Catalog, type Operations, type Result, type RpcHandlers } from '@bindery/contracts';
import { operationEndpoints, type RpcHandler } from '@bindery/platform';
import * as libraries from './libraries';
import * as items from './items';
import * as scans from './scans';
import * as conflicts from './conflicts';
import { locatorIndex, locatorText } from './locator';
import { kepub } from './kepub';
import { calibreReport } from './calibre-report';
import type { Ctx } from './context';

export const handlers: RpcHandlers<Catalog.CatalogOperations, Ctx> = {
  'library-list': libraries.listLibraries,
  'library-get': libraries.getLibrary,
  'library-create': libraries.createLibrary,
  'library-update': libraries.updateLibrary,
  'library-delete': libraries.deleteLibrary,
  browse: libraries.browse,
  'scan-start': scans.startScan,
  'upload-scan': scans.uploadScan,
  'scan-status': scans.scanStatus,
  'scan-issues': scans.scanIssues,
  'item-get': items.getItem,
  'item-create': items.createItem,
  'item-update': items.updateItemCmd,
  'item-delete': items.deleteItem,
  'items-bulk-delete': items.bulkDelete,
  'items-bulk-update': items.bulkUpdate,
  'item-cover': items.itemCover,
  'item-cover-set': items.setCover,
  'item-cover-reset': items.resetCover,
  'calibre-report': calibreReport,
  'conflicts-list': conflicts.listConflicts,
  'conflict-resolve': conflicts.resolveConflict,
  'locator-index': locatorIndex,
  'locator-text': locatorText,
  kepub,
};

/**
 * Each handler counted as the process's foreground work while it runs (a request the schema refuses
 * is not): the passes after a scan wait for it (scanner/covers.ts).
 */
function inForeground<M extends Operations>(table: RpcHandlers<M, Ctx>): RpcHandlers<M, Ctx> {
  const out: Record<string, (ctx: Ctx, req: never) => Promise<Result<unknown>>> = {};
  for (const [name, handle] of Object.entries<(ctx: Ctx, req: never) => Promise<Result<unknown>>>(table)) {
    out[name] = (ctx, req) => ctx.rt.foreground.answer(() => handle(ctx, req));
  }
  // the same handlers, each answering what it answered: only the key-by-key pairing is lost to Object.entries
  return out as RpcHandlers<M, Ctx>;
}

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  return operationEndpoints(Catalog.CatalogOperations, inForeground(handlers), ctx);
}
