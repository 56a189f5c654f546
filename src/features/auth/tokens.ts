import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../../core/errors.ts';

const ISSUER = 'lore';
const ALGORITHM = 'HS256';

/** Who a verified access token speaks for. */
export type TokenClaims = {
  workspaceId: string;
  /** The access-token client row's id. */
  clientRowId: string;
  /** The public client id (OAuth `client_id`). */
  clientId: string;
  scopes: string[];
  /** Knowledge bases the client is restricted to; undefined means all of its workspace. */
  knowledgeBaseIds: string[] | undefined;
  expiresAt: number;
};

/** Signs an access token (a JWT, HS256) for a client. */
export async function signAccessToken(
  secret: Uint8Array,
  claims: Omit<TokenClaims, 'expiresAt'>,
  ttlSeconds: number,
): Promise<string> {
  return new SignJWT({
    ws: claims.workspaceId,
    cid: claims.clientRowId,
    scope: claims.scopes.join(' '),
    ...(claims.knowledgeBaseIds ? { kbs: claims.knowledgeBaseIds } : {}),
  })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setSubject(claims.clientId)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(secret);
}

/**
 * Verifies signature, algorithm (only HS256: `alg: none` and every other algorithm are refused),
 * issuer and expiry. Any failure is the spec's 401.
 */
export async function verifyAccessToken(secret: Uint8Array, token: string): Promise<TokenClaims> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: [ALGORITHM], issuer: ISSUER });
    const { ws, cid, scope, kbs, sub, exp } = payload;
    if (typeof ws !== 'string' || typeof cid !== 'string' || typeof scope !== 'string' || typeof sub !== 'string') {
      throw new AppError('INVALID_TOKEN', 'The access token lacks required claims.');
    }
    return {
      workspaceId: ws,
      clientRowId: cid,
      clientId: sub,
      scopes: scope.split(' ').filter(Boolean),
      knowledgeBaseIds: Array.isArray(kbs) ? kbs.map(String) : undefined,
      expiresAt: exp ?? 0,
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new AppError('INVALID_TOKEN', 'The access token has expired.');
    throw new AppError('INVALID_TOKEN');
  }
}
