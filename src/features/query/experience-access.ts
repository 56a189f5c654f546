import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../core/context.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { authenticate, bearerToken } from '../auth/guard.ts';
import { missingScopes } from '../auth/scopes.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import type { Experience } from '../experiences/experiences.schemas.ts';
import { originMatches, parseOriginPattern } from '../experiences/origin-pattern.ts';
import type { Session } from '../sessions/sessions.schemas.ts';
import { queryContext } from './query-context.ts';

/**
 * Who is calling an experience: a verified token of its workspace, or an anonymous visitor; with
 * what was read beside the experience (see `queryContext`).
 */
export type ExperienceCaller = {
  experience: Experience;
  claims: TokenClaims | undefined;
  /** The session the request names, of this workspace (null: none such, or none named). */
  session: Session | null;
  vectorDimension: number | null;
};

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request's Origin was refused: its response must not allow that origin. */
    originRefused?: boolean;
  }
}

function assertOriginAllowed(request: FastifyRequest, experience: Experience, claims: TokenClaims | undefined): void {
  if (experience.allowedOrigins.length === 0) return;
  const origin = request.headers.origin;
  // A browser always sends Origin on a cross-origin POST. A server-side caller sends none: it may
  // call when it proves itself with a token, since origin checks protect browser embeds only.
  if (origin === undefined && claims) return;
  const allowed =
    origin !== undefined &&
    experience.allowedOrigins.some((text) => {
      const pattern = parseOriginPattern(text);
      return !('error' in pattern) && originMatches(pattern, origin);
    });
  if (!allowed) {
    request.originRefused = true;
    throw new AppError(
      'FORBIDDEN',
      origin === undefined
        ? `Experience ${experience.id} only answers the origins in its allowedOrigins, and the request has no Origin header.`
        : `The origin ${origin} is not allowed for experience ${experience.id}.`,
    );
  }
}

/**
 * The spec's access rules of an experience, in this order: the experience exists (404), its
 * workspace is active (400), a token that is sent is valid (401) and of the experience's
 * workspace (403), the Origin is allowed (403), then a token is present when the experience
 * requires one (401) and holds `query:execute` (403, or 401 where the experience requires a token:
 * a token without the scope does not authenticate the caller for it).
 */
export async function authorizeExperienceCall(
  context: AppContext,
  request: FastifyRequest,
  experienceId: string,
  sessionId?: string,
): Promise<ExperienceCaller> {
  const found = await queryContext(context.db, experienceId, { sessionId, encoder: context.embedder });
  if (!found) throw notFound('Experience', experienceId);
  const { experience, workspaceStatus, session, vectorDimension } = found;
  if (workspaceStatus !== 'active') throw new AppError('WORKSPACE_INACTIVE', `The workspace of experience ${experienceId} is not active.`);
  const token = bearerToken(request);
  const claims = token === undefined ? undefined : await authenticate(context, token);
  if (claims && claims.workspaceId !== experience.workspaceId) {
    throw new AppError('FORBIDDEN', `The access token belongs to another workspace than experience ${experienceId}.`);
  }
  assertOriginAllowed(request, experience, claims);
  if (!claims) {
    if (experience.requireAuth) {
      throw new AppError('UNAUTHENTICATED', `Experience ${experienceId} requires a bearer access token with the scope query:execute.`);
    }
    return { experience, claims, session, vectorDimension };
  }
  const missing = missingScopes(claims.scopes, ['query:execute']);
  if (missing.length > 0) {
    const details = { required: ['query:execute'], missing };
    if (experience.requireAuth) {
      throw new AppError('INVALID_TOKEN', `Experience ${experienceId} requires a token with the scope query:execute, and this token lacks it.`, details);
    }
    throw new AppError('INSUFFICIENT_SCOPE', 'The access token lacks the scope query:execute.', details);
  }
  const restricted = claims.knowledgeBaseIds;
  if (restricted && experience.knowledgeBaseIds.some((id) => !restricted.includes(id))) {
    throw new AppError('FORBIDDEN', `This access token is restricted to other knowledge bases than those of experience ${experienceId}.`);
  }
  return { experience, claims, session, vectorDimension };
}
