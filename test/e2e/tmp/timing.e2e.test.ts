import { it } from 'vitest';
import { startBindery } from '../../support/bindery';
it('timing', async () => {
  for (const mode of ['embedded', 'distributed'] as const) {
    let t = Date.now();
    const b = await startBindery(mode);
    console.log(mode, 'start', Date.now() - t); t = Date.now();
    await b.restart();
    console.log(mode, 'restart', Date.now() - t); t = Date.now();
    await b.stop();
    console.log(mode, 'stop', Date.now() - t);
  }
}, 120000);
