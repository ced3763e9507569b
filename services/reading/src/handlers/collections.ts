// Collections: placeholder until step 5.
import type { Trx } from '@bindery/platform';
import type { Ctx } from './context';

export async function autoAssign(_ctx: Ctx, _trx: Trx, _itemId: string): Promise<void> {}
