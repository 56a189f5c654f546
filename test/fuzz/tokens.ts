/**
 * Authorization headers that must not authenticate: garbage, `alg: none`, tokens signed with the
 * wrong secret or expired, and tokens signed with the server's own secret whose claims name no
 * real client (non-UUID `ws`/`cid`, wrong types, no `exp`, `scope: "*"`). The last kind gets past
 * the signature check, so it is what exercises the claims handling behind it.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Ref } from './json-text.ts';
import { nulStrings, oddStrings } from './values.ts';

/** Which Authorization a request carries; `Ref`s in claims are resolved when the request is built. */
export type TokenSpec =
  | { kind: 'none' }
  | { kind: 'own' | 'lowScope' | 'foreign' | 'admin' }
  /** An Authorization header value sent as is. */
  | { kind: 'raw'; value: string }
  /** A JWT built here: `secret` is the server's (`server`), another one, or none (`alg: none`). */
  | { kind: 'jwt'; header: Record<string, unknown>; claims: Record<string, unknown>; secret: 'server' | 'other' | 'none' };

/** The fixture's own workspace and client row, for claims that name them. */
export type ClaimIds = { workspaceId: string; clientRowId: string };

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A compact JWT with these header and claims, HMAC-SHA256-signed with `secret` (unsigned when undefined). */
export function compactJwt(header: Record<string, unknown>, claims: Record<string, unknown>, secret: Uint8Array | undefined): string {
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = secret ? createHmac('sha256', secret).update(signingInput).digest('base64url') : '';
  return `${signingInput}.${signature}`;
}

const now = () => Math.floor(Date.now() / 1000);

/** Claim values that are not the UUID of a real client or workspace. */
function bogusId(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>('not-a-uuid', '', 'x'.repeat(300), 0, 1e308, null, true, [], {}, ['a'], "1' OR '1'='1", '00000000-0000-0000-0000-000000000000'),
    fc.constantFrom(...nulStrings, ...oddStrings.slice(0, 12)),
    fc.uuid(),
  );
}

/**
 * Claims signed with the server's secret that still name no valid caller: the workspace and client
 * row are never the real pair (a real client row only appears with a workspace that is not its own).
 */
function forgedClaims(): fc.Arbitrary<Record<string, unknown>> {
  const pair = fc.oneof(
    fc.tuple(bogusId(), bogusId()),
    fc.tuple(bogusId(), fc.constant(new Ref('client'))),
    fc.tuple(fc.constant(new Ref('workspace')), bogusId()),
  );
  return fc
    .record(
      {
        pair,
        scope: fc.constantFrom<unknown>('*', '', '* query:execute', 7, ['*'], null),
        sub: fc.constantFrom<unknown>('client', '', '\u0000', 5),
        iss: fc.constantFrom<unknown>('lore', 'lore', 'other'),
        kbs: fc.constantFrom<unknown>(undefined, ['not-a-uuid'], 'x', [null], [new Ref('knowledgeBase')]),
        exp: fc.constantFrom<unknown>(undefined, undefined, now() + 3600, 1e308, 'never', -1),
      },
      { requiredKeys: ['pair'] },
    )
    .map(({ pair: [ws, cid], ...rest }) => ({ ws, cid, ...rest }));
}

/** An Authorization value or JWT that must be refused (401, or 403 for a token of too few scopes). */
export function refusedToken(): fc.Arbitrary<{ rule: string; token: TokenSpec }> {
  const hs256 = { alg: 'HS256', typ: 'JWT' };
  const realClaims = { ws: new Ref('workspace'), cid: new Ref('client'), sub: 'client', scope: '*', iss: 'lore', iat: now() };
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant({ rule: 'no Authorization header', token: { kind: 'none' as const } }) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom('Bearer', 'Bearer ', 'Bearer a b', 'Basic dXNlcjpwYXNz', 'bearer xxx.yyy.zzz', 'Bearer eyJhbGciOiJIUzI1NiJ9', 'Token abc', 'Bearer \u00e9\u00e9', 'Bearer ...', `Bearer ${'a'.repeat(4000)}`)
        .map((value) => ({ rule: 'garbage Authorization', token: { kind: 'raw' as const, value } })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom({ alg: 'none' }, { alg: 'none', typ: 'JWT' }, { alg: 'NONE' }).map((header) => ({
        rule: 'alg none',
        token: { kind: 'jwt' as const, header, claims: { ...realClaims, exp: now() + 3600 }, secret: 'none' as const },
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ rule: 'wrong secret', token: { kind: 'jwt' as const, header: hs256, claims: { ...realClaims, exp: now() + 3600 }, secret: 'other' as const } }),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ rule: 'expired', token: { kind: 'jwt' as const, header: hs256, claims: { ...realClaims, iat: now() - 7200, exp: now() - 3600 }, secret: 'server' as const } }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, unknown>>({ alg: 'HS512' }, { alg: 'RS256' }, { alg: 'HS256', crit: ['x'] }, { alg: 'none', typ: 'JWT', kid: '../../etc/passwd' }).map((header) => ({
        rule: 'odd JWT header',
        token: { kind: 'jwt' as const, header, claims: { ...realClaims, exp: now() + 3600 }, secret: 'server' as const },
      })),
    },
    { weight: 6, arbitrary: forgedClaims().map((claims) => ({ rule: 'forged claims', token: { kind: 'jwt' as const, header: hs256, claims, secret: 'server' as const } })) },
  );
}
