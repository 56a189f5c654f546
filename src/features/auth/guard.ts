import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { clientStanding, type ClientStanding } from './client-credentials.ts';
import { effectiveKnowledgeBases, effectiveScopes, missingScopes, type Scope } from './scopes.ts';
import { verifyAccessToken, type TokenClaims } from './tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `authorize` once the bearer token is verified. */
    auth?: TokenClaims;
  }
}

/** The verified caller of a route guarded by `authorize`. */
export function caller(request: FastifyRequest): TokenClaims {
  if (!request.auth) throw new AppError('UNAUTHENTICATED');
  return request.auth;
}

/** The bearer token of a request, or undefined when there is no Authorization header. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new AppError('INVALID_TOKEN', 'The Authorization header must be "Bearer <access token>".');
  return match[1];
}

// A token is a signed statement, but a revoked client or a suspended workspace must stop it
// before it expires. Looking that up on every request costs one indexed query; caching it for a
// few seconds keeps hot paths at zero queries while revocation still takes effect within
// STANDING_TTL_MS on every process (and at once on the process that revoked).
const STANDING_TTL_MS = 5_000;
const MAX_CACHED = 10_000;
// Keyed by client row id; the entry keeps the workspace it was read for, so that a token naming
// another workspace than its client's is looked up (and refused) rather than served from cache.
const standingCache = new Map<string, ClientStanding & { workspaceId: string; until: number }>();

/** Forgets a client's cached standing, e.g. right after it was revoked. */
export function forgetStanding(clientRowId: string): void {
  standingCache.delete(clientRowId);
}

/** Forgets every cached standing (after a workspace's status change, which touches all its clients). */
export function forgetAllStandings(): void {
  standingCache.clear();
}

async function standing(context: AppContext, claims: TokenClaims) {
  const cached = standingCache.get(claims.clientRowId);
  if (cached && cached.until > Date.now() && cached.workspaceId === claims.workspaceId) return cached;
  const found = await clientStanding(context.db, claims.workspaceId, claims.clientRowId);
  if (!found) return undefined;
  if (standingCache.size >= MAX_CACHED) standingCache.clear();
  const entry = { ...found, workspaceId: claims.workspaceId, until: Date.now() + STANDING_TTL_MS };
  standingCache.set(claims.clientRowId, entry);
  return entry;
}

/**
 * Verifies a bearer token and the standing of its client, without checking scopes.
 * Throws the spec's 401 for a missing, malformed, expired, forged or revoked token. What the
 * caller may do is what the token says intersected with what its client holds now: a token
 * cannot grant more than its client, and a client whose scopes shrink loses them in its tokens
 * too (within the standing cache's 5 s on other processes, as revocation).
 */
export async function authenticate(context: AppContext, token: string | undefined): Promise<TokenClaims> {
  if (token === undefined) throw new AppError('UNAUTHENTICATED');
  const claims = await verifyAccessToken(context.secrets.tokenSecret, token);
  const found = await standing(context, claims);
  if (!found || found.revoked) throw new AppError('INVALID_TOKEN', 'The access token\'s client was revoked.');
  if (found.workspaceStatus !== 'active') throw new AppError('WORKSPACE_SUSPENDED');
  return {
    ...claims,
    scopes: effectiveScopes(claims.scopes, found.scopes),
    knowledgeBaseIds: effectiveKnowledgeBases(claims.knowledgeBaseIds, found.knowledgeBaseIds ?? undefined),
  };
}

/** Throws the spec's 403 (with `required` and `missing`) when the caller lacks a scope. */
export function assertScopes(claims: TokenClaims, required: readonly Scope[]): void {
  const missing = missingScopes(claims.scopes, required);
  if (missing.length > 0) {
    throw new AppError('INSUFFICIENT_SCOPE', `The access token lacks the scope ${missing.join(', ')}.`, {
      required: [...required],
      missing,
    });
  }
}

/** An onRequest hook: a verified bearer token holding every scope in `required`. */
export function authorize(context: AppContext, required: readonly Scope[]): onRequestHookHandler {
  return async (request) => {
    const claims = await authenticate(context, bearerToken(request));
    assertScopes(claims, required);
    request.auth = claims;
  };
}

/** Throws 403 when the token is restricted to other knowledge bases than `knowledgeBaseId`. */
export function assertKnowledgeBaseAllowed(claims: TokenClaims, knowledgeBaseId: string): void {
  if (claims.knowledgeBaseIds && !claims.knowledgeBaseIds.includes(knowledgeBaseId)) {
    throw new AppError('FORBIDDEN', `This access token is restricted to other knowledge bases than ${knowledgeBaseId}.`);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** An onRequest hook for the platform administration API: `Authorization: Bearer <ADMIN_API_KEY>`. */
export function authorizeAdmin(context: AppContext): onRequestHookHandler {
  return async (request) => {
    const key = context.secrets.adminApiKey;
    if (!key) throw new AppError('INVALID_ADMIN_KEY', 'The admin API is disabled: set ADMIN_API_KEY to enable it.');
    const token = bearerToken(request);
    // Comparing digests keeps the comparison constant-time whatever the length of the input.
    if (token === undefined || !timingSafeEqual(digest(token), digest(key))) throw new AppError('INVALID_ADMIN_KEY');
  };
}
