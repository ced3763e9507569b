// Reading's operations: a request is checked once against its operation's schema at the service,
// and a malformed one is refused there (invalid_request) before any handler or store is reached.
import { describe, expect, it } from 'vitest';
import { Messages, Reading } from '@bindery/contracts';
import { requestChecks } from '@bindery/platform';
import { endpoints, handlers } from '../src/handlers/rpc';
import type { Ctx } from '../src/handlers/context';

// A context with nothing in it: a refused request must never reach a handler (one that did would
// fail on it, and the answer would not be the schema's refusal).
const refusedOnly = endpoints({} as Ctx);
const caller = { user_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', role: 'user' as const };
const item = '0f8fad5b-d9cb-469f-a165-70867728950e';
const invalid = { ok: false, error: { code: 'invalid_request', message: Messages.invalidRequest } };

describe("reading's operations", () => {
  it('every operation has a request schema, a result schema, a handler and an endpoint', () => {
    const names = Object.keys(Reading.ReadingOperations).sort();
    expect(names.length).toBe(50);
    expect(Object.keys(handlers).sort()).toEqual(names);
    expect(Object.keys(refusedOnly).sort()).toEqual(names);
    for (const name of names) {
      const op = Reading.ReadingOperations[name as Reading.ReadingOp];
      expect(op.request, name).toBeTypeOf('object');
      expect(op.result, name).toBeTypeOf('object');
    }
  });

  it.each([
    // no caller, or a caller that is not one
    ['progress-get', { item_id: item }],
    ['progress-get', { caller: { user_id: caller.user_id, role: 'root' }, item_id: item }],
    // the item or the record the operation names is missing, or not text
    ['progress-get', { caller }],
    ['progress-put', { caller, input: { percentage: 0.5 } }],
    ['progress-item', { caller, id: 7 }],
    ['conflict-resolve', { caller, input: { keep: 'current' } }],
    ['annotation-update', { caller, kind: 'note', input: { note: 'n' } }],
    ['collection-remove', { caller, id: item }],
    ['rating-put', { caller, item_id: [item], input: { rating: 4 } }],
    // fields of the wrong shape
    ['progress-put', { caller, item_id: item, input: 'percentage=0.5' }],
    ['conflicts-list', { caller, query: { status: 3 } }],
    ['conflicts-dismiss-all', { caller, access: { all: false } }],
    ['kosync-push', { caller, device: { device_id: 'not-a-uuid', name: 'Kindle' }, input: {} }],
    ['kosync-pull', { caller, device: { device_id: item, name: 'n'.repeat(101) }, query: { document: 'abc' } }],
    ['usage-counts', { item_ids: 'all' }],
    ['usage-counts', { item_ids: Array.from({ length: 10_001 }, () => item) }],
    ['dashboard-prefs-get', null],
    ['filters-list', 'filters please'],
  ] as const)('%s refuses a malformed request with invalid_request: %j', async (op, body) => {
    expect(await refusedOnly[op]!(body)).toEqual(invalid);
  });

  it('a well-formed request passes the schema', () => {
    const checks = requestChecks(Reading.ReadingOperations);
    expect(checks['progress-put']({ caller, item_id: item, input: { percentage: 0.5 } })).toBeNull();
    expect(checks['progress-put']({ caller, device: { device_id: item, name: 'Kobo' }, item_id: item })).toBeNull();
    expect(checks['dashboard-prefs-get']({ caller })).toBeNull();
    expect(checks['kosync-pull']({ caller, access: { all: false, ids: [] }, query: { document: 'abc' } })).toBeNull();
    expect(checks['usage-counts']({ item_ids: [item] })).toBeNull();
    expect(checks['progress-get']({ caller })).toEqual(invalid.error);
  });
});
