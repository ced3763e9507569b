// The reader's boot script (reader-boot.<hash>.js, loaded before the reader's bundle): it asks for
// what the first page needs (early.ts) as soon as the page is parsed.
import { startEarly } from './early';

startEarly();
