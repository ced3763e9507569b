// The catalog's operations: a request is checked once against its operation's schema at the
// service, and a malformed one is refused there (invalid_request) before any handler, store or
// foreground count is reached; a well-formed one is answered by its handler, counted as foreground
// work while it runs (the passes after a scan wait for it).
import { describe, expect, it } from 'vitest';
import { Catalog, Messages } from '@bindery/contracts';
import { Foreground, requestChecks } from '@bindery/platform';
import { endpoints, handlers } from '../src/handlers/rpc';
import type { Ctx } from '../src/handlers/context';

// A context with nothing in it: a refused request must never reach a handler (one that did would
// fail on it, and the answer would not be the schema's refusal).
const refusedOnly = endpoints({} as Ctx);
const caller = { user_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', role: 'admin' as const };
const id = '3f2c7a5e-9b1d-4c8e-a6f0-2d4b8e1c7a93';
const sha256 = 'ab'.repeat(32);
const invalid = { ok: false, error: { code: 'invalid_request', message: Messages.invalidRequest } };

/** The runtime's own foreground count, with how many answers it was asked to count. */
class CountedForeground extends Foreground {
  answered = 0;
  override answer<T>(fn: () => Promise<T>): Promise<T> {
    this.answered++;
    return super.answer(fn);
  }
}

describe("the catalog's operations", () => {
  it('every operation has a request schema, a result schema, a handler and an endpoint', () => {
    const names = Object.keys(Catalog.CatalogOperations).sort();
    expect(names).toHaveLength(25);
    expect(Object.keys(handlers).sort()).toEqual(names);
    expect(Object.keys(refusedOnly).sort()).toEqual(names);
    expect(Object.keys(Catalog.CatalogResults).sort()).toEqual(names);
    for (const name of names) {
      const op = Catalog.CatalogOperations[name as Catalog.CatalogOp];
      expect(op.request, name).toBe(Catalog.CatalogRequests[name as Catalog.CatalogOp]);
      expect(op.result, name).toBe(Catalog.CatalogResults[name as Catalog.CatalogOp]);
    }
  });

  it.each([
    ['item-get', 'an id that is a number', { caller, id: 42 }],
    ['item-get', 'no caller', { id }],
    ['library-list', 'a role that is none', { caller: { user_id: caller.user_id, role: 'root' } }],
    ['library-create', 'an input that is text', { caller, input: 'name=Comics' }],
    ['library-update', 'an input that is a list', { caller, id, input: ['name'] }],
    ['browse', 'a path that is a number', { caller, path: 7 }],
    ['scan-issues', 'a query value that is a number', { caller, query: { limit: 5 } }],
    ['upload-scan', 'no library', { caller }],
    ['item-cover', 'a kind that is none', { caller, id, kind: 'poster' }],
    ['item-cover-set', 'a picture over 900,000 characters', { caller, id, jpeg_base64: 'A'.repeat(900_001) }],
    ['items-bulk-delete', 'a null input', { caller, input: null }],
    ['conflict-resolve', 'no input', { caller, id }],
    ['locator-index', 'a hash of 65 characters', { sha256: 'a'.repeat(65) }],
    ['locator-text', 'a spine below 0', { sha256, text: 'the', spine: -1, offset: 0 }],
    ['locator-text', 'a text of 1,001 characters', { sha256, text: 't'.repeat(1001), spine: 0, offset: 0 }],
    ['kepub', 'a part above 100,000', { sha256, part: 100_001 }],
    ['kepub', 'spans_only that is text', { sha256, part: 0, spans_only: 'yes' }],
    ['conflicts-list', 'a null body', null],
    ['scan-status', 'a body that is text', 'status please'],
  ] as const)('%s refuses a malformed request (%s) with invalid_request', async (op, _what, body) => {
    expect(await refusedOnly[op]!(body)).toEqual(invalid);
  });

  it('a well-formed request passes the schema and its handler answers it, counted as foreground work; a refused one is not counted', async () => {
    const checks = requestChecks(Catalog.CatalogOperations);
    expect(checks['item-get']({ caller, id })).toBeNull();
    expect(checks.kepub({ sha256, part: 3, spans_only: true })).toBeNull();
    expect(checks['scan-issues']({ caller, query: { library_id: id, limit: '5', tag: ['a', 'b'] } })).toBeNull();
    expect(checks['item-cover']({ caller, id, kind: 'poster' })).toEqual(invalid.error);

    const foreground = new CountedForeground();
    const live = endpoints({ rt: { foreground } } as unknown as Ctx);
    // both handlers answer before any store is read: an id that is not one, a hash that is not hex
    expect(await live['item-get']!({ caller, id: 'not-an-id' })).toEqual({ ok: false, error: { code: 'validation', message: Messages.invalidMediaItemId } });
    expect(await live.kepub!({ sha256: 'z'.repeat(64), part: 0 })).toEqual({ ok: false, error: { code: 'not_found', message: 'kepub not found' } });
    expect(foreground.answered).toBe(2);
    expect(await live['item-get']!({ caller, id: 42 })).toEqual(invalid);
    expect(foreground.answered).toBe(2);
    expect(foreground.active).toBe(0);
  });
});
