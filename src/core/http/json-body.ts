import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { malformedJsonMessage } from './validation-messages.ts';

/**
 * Fastify's JSON body parser, with one change: a body it refuses is answered with what is wrong
 * with it (where the syntax breaks, or that it is empty), which Fastify's own error drops.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value) => {
      if (error) done(new AppError('MALFORMED_JSON', malformedJsonMessage(body as string)), undefined);
      else done(null, value);
    });
  });
}
