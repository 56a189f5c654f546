import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

/** The process logger: JSON lines in production, pino-pretty in a terminal. */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  return pino({
    level: config.logLevel,
    ...(config.logFormat === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  });
}
