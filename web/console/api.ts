/**
 * The console's only way to the service: the public API, called with the signed-in access token.
 * The token lives in memory and in sessionStorage (so a reload keeps the operator signed in
 * until the tab closes); it never appears in a URL.
 */

/** The service's error body (`missing` and `required` on a 403 for a scope). */
export type ErrorBody = {
  statusCode: number;
  error: string;
  message: string;
  missing?: string[];
  required?: string[];
  errors?: { path: string; message: string }[];
};

/** An answer other than 2xx, with the service's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }

  /** The scopes the token lacks, when this is a 403 for a scope. */
  get missingScopes(): string[] {
    return this.status === 403 && Array.isArray(this.body.missing) ? this.body.missing : [];
  }
}

export type Session = { token: string; clientId: string; scopes: string[]; expiresAt: number };

const storageKey = 'lore.console.session';

/** The stored session, unless it is absent, unreadable or expired. */
export function loadSession(): Session | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(storageKey) ?? 'null') as Session | null;
    if (stored && typeof stored.token === 'string' && stored.expiresAt > Date.now()) return stored;
  } catch {
    // A damaged entry is treated as no session: the operator signs in again.
  }
  sessionStorage.removeItem(storageKey);
  return undefined;
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(storageKey, JSON.stringify(session));
  else sessionStorage.removeItem(storageKey);
}

/** Reads an answer: JSON when it says so, and an ApiError for anything but 2xx. */
async function readAnswer<T>(response: Response): Promise<T> {
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.includes('json') && text !== '';
  const body: unknown = isJson ? JSON.parse(text) : text;
  if (response.ok) return body as T;
  const error =
    typeof body === 'object' && body !== null && 'message' in body
      ? (body as ErrorBody)
      : { statusCode: response.status, error: response.statusText, message: `The service answered ${response.status} ${response.statusText}.` };
  throw new ApiError(response.status, error);
}

/** The client-credentials grant: a token for these credentials with all of the client's scopes. */
export async function signIn(clientId: string, clientSecret: string): Promise<Session> {
  const response = await fetch('/v2/auth/access-tokens', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  const answer = await readAnswer<{ access_token: string; expires_in: number; scope: string }>(response);
  return {
    token: answer.access_token,
    clientId,
    scopes: answer.scope.split(' ').filter(Boolean),
    expiresAt: Date.now() + answer.expires_in * 1000,
  };
}

export type Query = Record<string, string | number | boolean | undefined>;

/** `path?query` without the undefined and empty values. */
export function withQuery(path: string, query: Query = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** Calls the API with the session's token; `onUnauthorized` runs on a 401 (expired or revoked token). */
export class Api {
  constructor(
    readonly session: Session,
    private readonly onUnauthorized: (error: ApiError) => void,
  ) {}

  /** True when the token holds `scope` (or `*`). */
  holds(scope: string): boolean {
    return this.session.scopes.includes('*') || this.session.scopes.includes(scope);
  }

  async request<T>(method: string, path: string, options: { query?: Query; json?: unknown; form?: FormData; signal?: AbortSignal } = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.session.token}` };
    let body: BodyInit | undefined;
    if (options.form) body = options.form;
    else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(withQuery(path, options.query), { method, headers, body, signal: options.signal ?? null });
    try {
      return await readAnswer<T>(response);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) this.onUnauthorized(error);
      throw error;
    }
  }

  get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, { query, signal });
  }
}
