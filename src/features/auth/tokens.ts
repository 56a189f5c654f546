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

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value);
}

/**
 * Verifies signature, algorithm (only HS256: `alg: none` and every other algorithm are refused),
 * issuer, expiry, and the shape of every claim (RFC 8725, section 3.10: validate all claims, even
 * those of a correctly signed token): `exp` is required, the workspace and client ids are UUIDs,
 * the knowledge bases a list of UUIDs. Any failure is the spec's 401.
 */
export async function verifyAccessToken(secret: Uint8Array, token: string): Promise<TokenClaims> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: [ALGORITHM], issuer: ISSUER, requiredClaims: ['exp', 'sub'] });
    const { ws, cid, scope, kbs, sub, exp } = payload;
    const kbsValid = kbs === undefined || (Array.isArray(kbs) && kbs.every(isUuid));
    if (!isUuid(ws) || !isUuid(cid) || typeof scope !== 'string' || typeof sub !== 'string' || typeof exp !== 'number' || !kbsValid) {
      throw new AppError('INVALID_TOKEN', 'The access token\'s claims are missing or malformed.');
    }
    return {
      workspaceId: ws,
      clientRowId: cid,
      clientId: sub,
      scopes: scope.split(' ').filter(Boolean),
      knowledgeBaseIds: kbs as string[] | undefined,
      expiresAt: exp,
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw new AppError('INVALID_TOKEN', 'The access token has expired.');
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw new AppError('INVALID_TOKEN', `The access token's ${error.claim} claim is missing or invalid.`);
    throw new AppError('INVALID_TOKEN');
  }
}
