// The passes after a scan (covers, locator indexes) pause between books for as long as the book took,
// then wait while requests are being answered — at most a second, so they always go on.
import { expect, it } from 'vitest';
import { Foreground } from '@bindery/platform';
import type { Ctx } from '../src/handlers/context';
import { breathe } from '../src/scanner/covers';

it('waits while a request is answered, and no longer than a second', async () => {
  const foreground = new Foreground();
  const ctx = { rt: { foreground } } as unknown as Ctx;
  // a request answered for 200 ms
  void foreground.answer(() => new Promise((r) => setTimeout(r, 200)));
  const t0 = Date.now();
  await breathe(ctx, Date.now());
  const waited = Date.now() - t0;
  expect(waited).toBeGreaterThanOrEqual(190);
  expect(waited).toBeLessThan(900);
  // one that takes longer than the pass waits
  const slow = foreground.answer(() => new Promise((r) => setTimeout(r, 1500)));
  const t1 = Date.now();
  await breathe(ctx, Date.now());
  expect(Date.now() - t1).toBeGreaterThanOrEqual(990);
  await slow;
  expect(foreground.active).toBe(0);
  const t2 = Date.now();
  await breathe(ctx, t2 - 30);
  expect(Date.now() - t2).toBeLessThan(200);
});
