/** Every scope a client can hold. `*` grants all of them. */
export const knownScopes = [
  'query:execute',
  'data-ingestion:read',
  'data-ingestion:write',
  'knowledge-bases:read',
  'knowledge-bases:write',
  'experiences:read',
  'experiences:write',
  'sessions:read',
  'sessions:write',
  'clients:write',
  '*',
] as const;

export type Scope = (typeof knownScopes)[number];

/** The required scopes that `granted` does not cover. */
export function missingScopes(granted: readonly string[], required: readonly Scope[]): Scope[] {
  if (granted.includes('*')) return [];
  return required.filter((scope) => !granted.includes(scope));
}
