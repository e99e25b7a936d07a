/**
 * How far V8 lets a server process's heap grow past its live data before a
 * full collection. Left to itself, V8 lets the heap grow up to four times
 * what survived the last one when collecting is cheap, which it is here: a
 * request's objects die young but many are promoted before they do, so a
 * worker that keeps about 40 MB alive peaked at 170 MB of heap and 270 MB
 * resident under the fan-out load. At 100% (twice the live data) the same
 * load peaked at 190 MB resident, for about 2% more CPU per page (README,
 * Performance). The flag is read each time V8 sets its next limit, so
 * setting it once the process runs takes effect from the next collection.
 */
import { setFlagsFromString } from 'node:v8';

/** Caps heap growth at `percent` past the live heap; 0 leaves V8's own choice. */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
