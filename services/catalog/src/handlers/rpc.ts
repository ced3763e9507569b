// The request/reply endpoints: each request is checked against its contract schema, then handled.
import { Compile } from 'typebox/compile';
import { Catalog, err, fail, Messages, type Result } from '@bindery/contracts';
import type { RpcHandler } from '@bindery/platform';
import * as libraries from './libraries';
import * as items from './items';
import * as scans from './scans';
import * as conflicts from './conflicts';
import { locatorIndex, locatorText } from './locator';
import { kepub } from './kepub';
import { calibreReport } from './calibre-report';
import type { Ctx } from './context';

type Handlers = { [K in Catalog.CatalogOp]: (ctx: Ctx, req: Catalog.CatalogRequest<K>) => Promise<Result<unknown>> };

const handlers: Handlers = {
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

export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  for (const op of Object.keys(handlers) as Catalog.CatalogOp[]) {
    const check = Compile(Catalog.CatalogRequests[op]);
    const h = handlers[op] as (ctx: Ctx, req: unknown) => Promise<Result<unknown>>;
    out[op] = async (body) => {
      if (!check.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
      // counted as the process's foreground work: the passes after a scan wait for it (scanner/covers.ts)
      return ctx.rt.foreground.answer(() => h(ctx, body));
    };
  }
  return out;
}
