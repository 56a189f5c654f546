import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../core/http/app-types.ts';

const ALLOWED_HEADERS = 'authorization, content-type, accept, x-request-id';
const EXPOSED_HEADERS = 'retry-after, x-request-id';
/** How long a browser may reuse a preflight answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

/**
 * CORS of the widget-facing routes. The experience, and so its allowedOrigins, is named in the
 * body or the path, which a preflight does not read: the preflight allows any origin to call
 * `method` (a GET needs one only when it sends a token), and the real
 * request is checked against the experience by `authorizeExperienceCall`. Its response allows the
 * caller's origin unless that origin was refused, so a refused page cannot read the answer.
 */
export function installWidgetCors(app: App, paths: readonly string[], method: 'GET' | 'POST' = 'POST'): { onSend: (request: FastifyRequest, reply: FastifyReply) => Promise<void> } {
  for (const path of paths) {
    app.options(path, { schema: { hide: true } }, async (request, reply) => {
      const origin = request.headers.origin;
      void reply.header('vary', 'Origin, Access-Control-Request-Headers');
      if (origin) {
        void reply.headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': `${method}, OPTIONS`,
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': String(PREFLIGHT_MAX_AGE),
        });
      }
      return reply.code(204).send();
    });
  }
  return {
    async onSend(request, reply) {
      void reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin && !request.originRefused) {
        void reply.headers({ 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS });
      }
    },
  };
}
