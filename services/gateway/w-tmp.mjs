import sharp from 'sharp';
import { readFileSync } from 'node:fs';
sharp.concurrency(1); sharp.cache(false);
const buf = readFileSync(process.argv[2]);
const out = await sharp(buf, { failOn: 'none' }).rotate().resize({ width: 4000, height: 4000, fit: 'inside', withoutEnlargement: true }).jpeg({quality:85}).toBuffer({resolveWithObject:true});
console.log(out.info.width, readFileSync('/proc/self/status','utf8').match(/Vm(Peak|HWM).*/g).join(' '));
