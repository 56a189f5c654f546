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
  'webhooks:read',
  'webhooks:write',
  '*',
] as const;

export type Scope = (typeof knownScopes)[number];

/** The required scopes that `granted` does not cover. */
export function missingScopes<Required extends string>(granted: readonly string[], required: readonly Required[]): Required[] {
  if (granted.includes('*')) return [];
  return required.filter((scope) => !granted.includes(scope));
}

/** What a token may do: its scopes within its client's current ones (`*` on either side defers to the other). */
export function effectiveScopes(token: readonly string[], client: readonly string[]): string[] {
  if (client.includes('*')) return [...token];
  if (token.includes('*')) return [...client];
  return token.filter((scope) => client.includes(scope));
}

/**
 * Which knowledge bases a token may use: its own list within its client's current list;
 * undefined means every knowledge base of the workspace.
 */
export function effectiveKnowledgeBases(token: readonly string[] | undefined, client: readonly string[] | undefined): string[] | undefined {
  if (!client) return token ? [...token] : undefined;
  if (!token) return [...client];
  return token.filter((id) => client.includes(id));
}
