/** A logger whose JSON lines a test reads back, for servers started with `startTestServer(..., logger)`. */
import pino, { type Logger } from 'pino';

export type CapturedLog = { logger: Logger; lines: Array<Record<string, unknown>> };

/** An info-level logger keeping every line it writes, parsed. */
export function captureLog(): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}
