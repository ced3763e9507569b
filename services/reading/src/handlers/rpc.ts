// The request/reply endpoints: reading's operations (contracts' ReadingOperations), each request
// checked once against its schema, then handled by the operation's handler, typed to its result.
import { Reading, type RpcHandlers } from '@bindery/contracts';
import { operationEndpoints, type RpcHandler } from '@bindery/platform';
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

export const handlers: RpcHandlers<Reading.ReadingOperations, Ctx> = {
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
  'usage-counts': usageCounts,
};

/**
 * The service's endpoints: each request checked once against its operation's schema (contracts'
 * ReadingOperations), then handled. Position writes (`progress-put`) go on to the group commit in
 * their handler, as before.
 */
export function endpoints(ctx: Ctx): Record<string, RpcHandler> {
  return operationEndpoints(Reading.ReadingOperations, handlers, ctx);
}
