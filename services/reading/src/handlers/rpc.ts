// The request/reply endpoints: each request is checked against its contract schema, then handled.
import { Compile } from 'typebox/compile';
import { err, fail, Messages, Reading, type Result } from '@bindery/contracts';
import type { RpcHandler } from '@bindery/platform';
import type { Ctx } from './context';
import * as progress from './progress';
import * as kosync from './kosync';
import * as conflicts from './conflicts';
import * as annotations from './annotations';
import * as koreader from './koreader-merge';
import * as ratings from './ratings';
import * as collections from './collections';
import * as filters from './filters';
import * as dashboard from './dashboard';
import * as readerSettings from './reader-settings';
import { usageCounts } from './usage';
import type { Req } from './util';

type Handler = (ctx: Ctx, req: Req) => Promise<Result<unknown>>;

export const handlers: Partial<Record<(typeof Reading.ReadingOps)[number], Handler>> = {
  'progress-get': progress.getProgress,
  'progress-put': progress.putProgress,
  'progress-delete': progress.deleteProgress,
  'progress-history': progress.history,
  'progress-item': progress.progressItem,
  'progress-delivered': progress.progressDelivered,
  ...kosync.handlers,
  'conflicts-list': conflicts.listConflicts,
  'conflict-get': conflicts.getConflict,
  'conflict-resolve': conflicts.resolveConflict,
  'conflict-delete': conflicts.deleteConflict,
  'conflicts-bulk-resolve': conflicts.bulkResolve,
  'conflicts-bulk-dismiss': conflicts.bulkDismiss,
  'conflicts-dismiss-all': conflicts.dismissAll,
  'annotations-list': annotations.listAnnotations,
  'annotation-create': annotations.createAnnotation,
  'annotation-get': annotations.getAnnotation,
  'annotation-update': annotations.updateAnnotation,
  'annotation-delete': annotations.deleteAnnotation,
  'annotations-deleted': annotations.listDeleted,
  'annotation-restore': annotations.restoreAnnotation,
  'annotation-purge': annotations.purgeAnnotation,
  'annotations-purge-all': annotations.purgeAll,
  'annotations-merge': koreader.mergeAnnotations,
  'annotations-delete-keys': koreader.deleteByKeys,
  'rating-get': ratings.getRating,
  'rating-create': ratings.createRating,
  'rating-put': ratings.putRating,
  'rating-delete': ratings.deleteRating,
  'collection-get': collections.getCollection,
  'collection-create': collections.createCollection,
  'collection-update': collections.updateCollection,
  'collection-delete': collections.deleteCollection,
  'collection-add': collections.addItems,
  'collection-remove': collections.removeItem,
  'collection-restore-system': collections.restoreSystem,
  'collection-preview': collections.preview,
  'filters-list': filters.listFilters,
  'filter-get': filters.getFilter,
  'filter-create': filters.createFilter,
  'filter-update': filters.updateFilter,
  'filter-delete': filters.deleteFilter,
  'dashboard-prefs-get': dashboard.getPrefs,
  'dashboard-prefs-put': dashboard.putPrefs,
  'reader-settings-put': readerSettings.putReaderSettings,
  'reader-settings-delete': readerSettings.deleteReaderSettings,
};

export function endpoints(ctx: Ctx, extra: Partial<Record<string, Handler>> = {}): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  const check = Compile(Reading.ReadingRequest);
  for (const [op, h] of Object.entries({ ...handlers, ...extra })) {
    out[op] = async (body) => {
      if (!check.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
      return h!(ctx, body as Req);
    };
  }
  const usage = Compile(Reading.UsageCountsRequest);
  out['usage-counts'] = async (body) => {
    if (!usage.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
    return usageCounts(ctx, body);
  };
  return out;
}
