// The thread that walks the whole data directory at a start (private-tree.ts, privateDataDirApart):
// it answers once with what it tightened, then ends.
import { parentPort, workerData } from 'node:worker_threads';
import { privateDataDir } from './private-tree';

parentPort?.postMessage(privateDataDir((workerData as { dir: string }).dir));
