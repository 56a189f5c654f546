import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { responses } from '../../core/http/schemas.ts';
import { findCredentials } from './client-credentials.ts';
import { knownScopes } from './scopes.ts';
import { decoyHash, verifySecret } from '../../core/secret-hash.ts';
import { signAccessToken } from './tokens.ts';

const TokenRequestSchema = Type.Object(
  {
    grant_type: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String({ description: 'Space-separated scopes narrowing the client\'s scopes.' })),
    clientId: Type.Optional(Type.String()),
    clientSecret: Type.Optional(Type.String()),
    scopes: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'OAuth 2.0 client-credentials grant as form fields, or the JSON form {clientId, clientSecret, scopes}.' },
);

const TokenResponseSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
  accessToken: Type.Optional(Type.String()),
  tokenType: Type.Optional(Type.Literal('Bearer')),
  expiresIn: Type.Optional(Type.Integer()),
});

type TokenRequest = Static<typeof TokenRequestSchema>;
type Credentials = { clientId: string; clientSecret: string; viaBasic: boolean };

// RFC 6749 2.3.1: a client that authenticated with Basic is answered with a Basic challenge.
const basicChallenge = { headers: { 'www-authenticate': 'Basic realm="lore"' } };

/** Undoes the form-encoding RFC 6749 2.3.1 applies inside Basic credentials; undefined when malformed. */
function formDecoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Client credentials from HTTP Basic authentication (RFC 6749 2.3.1) or from the body. */
function readCredentials(request: FastifyRequest, body: TokenRequest): Credentials {
  const header = request.headers.authorization;
  if (header && /^Basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const clientId = colon < 0 ? undefined : formDecoded(decoded.slice(0, colon));
    const clientSecret = colon < 0 ? undefined : formDecoded(decoded.slice(colon + 1));
    if (clientId === undefined || clientSecret === undefined) {
      throw new AppError('INVALID_CLIENT', 'The Basic credentials must be "client_id:client_secret", each form-encoded.', basicChallenge);
    }
    return { clientId, clientSecret, viaBasic: true };
  }
  const clientId = body.client_id ?? body.clientId;
  const clientSecret = body.client_secret ?? body.clientSecret;
  const errors = [
    ...(clientId ? [] : [{ path: '/client_id', message: 'is required (or clientId, or HTTP Basic authentication)' }]),
    ...(clientSecret ? [] : [{ path: '/client_secret', message: 'is required (or clientSecret, or HTTP Basic authentication)' }]),
  ];
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', 'The client credentials are missing.', { errors });
  return { clientId: clientId!, clientSecret: clientSecret!, viaBasic: false };
}

/** The scopes to grant: the client's own, or the narrower set the caller asked for. */
function grantedScopes(clientScopes: string[], body: TokenRequest): string[] {
  const requested = body.scopes ?? body.scope?.split(' ').filter(Boolean);
  if (!requested || requested.length === 0) return clientScopes;
  const unknown = requested.filter((scope) => !(knownScopes as readonly string[]).includes(scope));
  if (unknown.length > 0) throw new AppError('INVALID_SCOPE', `Unknown scope: ${unknown.join(', ')}.`);
  if (clientScopes.includes('*')) return [...new Set(requested)];
  const exceeding = requested.filter((scope) => !clientScopes.includes(scope));
  if (exceeding.length > 0) throw new AppError('INVALID_SCOPE', `The client does not hold the scope ${exceeding.join(', ')}.`);
  return [...new Set(requested)];
}

/** POST /v2/auth/access-tokens: the OAuth 2.0 client-credentials grant (RFC 6749 section 4.4). */
export function registerAccessTokenRoutes(app: App, context: AppContext): void {
  for (const url of ['/v2/auth/access-tokens', '/api/v2/auth/access-tokens']) {
    app.post(
      url,
      {
        schema: {
          tags: ['auth'],
          summary: 'Issue an access token (client-credentials grant)',
          hide: url.startsWith('/api'),
          consumes: ['application/x-www-form-urlencoded', 'application/json'],
          body: TokenRequestSchema,
          response: responses({ 200: TokenResponseSchema }, [400, 401, 403]),
        },
      },
      async (request, reply) => {
        const body = request.body;
        const isForm = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ?? false;
        if ((isForm || body.grant_type !== undefined) && body.grant_type !== 'client_credentials') {
          throw new AppError('UNSUPPORTED_GRANT_TYPE');
        }
        const credentials = readCredentials(request, body);
        const client = await findCredentials(context.db, credentials.clientId);
        const valid = await verifySecret(credentials.clientSecret, client?.secretHash ?? (await decoyHash()));
        if (!client || !valid || client.revoked) {
          throw new AppError('INVALID_CLIENT', undefined, credentials.viaBasic ? basicChallenge : {});
        }
        if (client.workspaceStatus !== 'active') throw new AppError('WORKSPACE_SUSPENDED');
        const scopes = grantedScopes(client.scopes, body);
        const ttl = context.config.tokenTtlSeconds;
        const accessToken = await signAccessToken(
          context.secrets.tokenSecret,
          {
            workspaceId: client.workspaceId,
            clientRowId: client.id,
            clientId: client.clientId,
            scopes,
            knowledgeBaseIds: client.knowledgeBaseIds ?? undefined,
          },
          ttl,
        );
        void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        const oauth = { access_token: accessToken, token_type: 'Bearer' as const, expires_in: ttl, scope: scopes.join(' ') };
        return isForm ? oauth : { ...oauth, accessToken, tokenType: 'Bearer' as const, expiresIn: ttl };
      },
    );
  }
}
