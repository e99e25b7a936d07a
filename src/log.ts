/** The server's logger: pino, one JSON line per event. */
import { pino, type Logger } from 'pino';

export type { Logger };

/** Makes the logger at `level` ('silent' in tests). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'backscroll' } });
}
