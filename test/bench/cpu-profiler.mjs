// Preloaded into Bindery processes by diag.ts (NODE_OPTIONS=--import …; --cpu-prof is not allowed
// there). SIGUSR2 starts the V8 sampling profiler; the next SIGUSR2 stops it and writes
// $BENCH_CPU_PROF_DIR/<pid>.cpuprofile, so only the load window is profiled.
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    void (async () => {
      if (!running) {
        running = true;
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 200 });
        await session.post('Profiler.start');
      } else {
        running = false;
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(profile));
        console.log(`cpu profile written for ${process.pid}`);
      }
    })();
  });
}
