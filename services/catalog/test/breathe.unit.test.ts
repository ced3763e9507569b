// The passes after a scan (covers, locator indexes) pause between books for as long as the book took,
// then wait while requests are being answered — at most a second, so they always go on.
import { expect, it } from 'vitest';
import type { Ctx } from '../src/handlers/context';
import { breathe } from '../src/scanner/covers';

it('waits while a request is answered, and no longer than a second', async () => {
  const ctx = { answering: 1 } as Ctx;
  const t0 = Date.now();
  setTimeout(() => (ctx.answering = 0), 200);
  await breathe(ctx, Date.now());
  const waited = Date.now() - t0;
  expect(waited).toBeGreaterThanOrEqual(190);
  expect(waited).toBeLessThan(900);
  ctx.answering = 1;
  const t1 = Date.now();
  await breathe(ctx, Date.now());
  expect(Date.now() - t1).toBeGreaterThanOrEqual(990);
  ctx.answering = 0;
  const t2 = Date.now();
  await breathe(ctx, t2 - 30);
  expect(Date.now() - t2).toBeLessThan(200);
});
