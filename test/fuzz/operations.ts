/**
 * The operations the fuzz targets: every path and method of the service's `/openapi.json`, plus
 * the routes it hides (the /api alias of the token grant, CORS preflights, metrics, the document
 * itself), reduced to what the request generators need.
 */

/** A JSON Schema as the OpenAPI document carries it (typebox output, `$ref`s inlined by Fastify). */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

/** The resources the fixture creates, which path parameters and body references point at. */
export type ResourceKind = 'workspace' | 'client' | 'knowledgeBase' | 'experience' | 'job' | 'entry' | 'session' | 'query' | 'webhook';

/** How an operation authenticates: a workspace bearer token, the admin key, optional (query), or none. */
export type AuthKind = 'bearer' | 'admin' | 'optional' | 'none';

/** A path or query parameter. */
export type Parameter = { name: string; schema: JsonSchema; resource?: ResourceKind };

/** One method of one route, with what its request may carry. */
export type Operation = {
  method: string;
  /** The route as OpenAPI writes it, e.g. `/api/v2/sessions/{id}`. */
  path: string;
  pathParams: Parameter[];
  query: Parameter[];
  /** The JSON body schema, when the route validates one. */
  body?: JsonSchema;
  /** The multipart form schema, when the route also takes multipart/form-data. */
  multipart?: JsonSchema;
  auth: AuthKind;
  /** Whether the route changes state on success (it must then only get requests that fail). */
  mutates: boolean;
};

// Path segments before an `{id}` name the resource it points at.
const segmentResources: Record<string, ResourceKind> = {
  workspaces: 'workspace',
  'access-token-clients': 'client',
  'knowledge-bases': 'knowledgeBase',
  experiences: 'experience',
  jobs: 'job',
  entries: 'entry',
  sessions: 'session',
  queries: 'query',
  webhooks: 'webhook',
};

function resourceOf(path: string, name: string): ResourceKind | undefined {
  const segments = path.split('/');
  const index = segments.indexOf(`{${name}}`);
  return segmentResources[segments[index - 1] ?? ''];
}

function authOf(security: Record<string, string[]>[] | undefined): AuthKind {
  if (!security || security.length === 0) return 'none';
  if (security.some((entry) => Object.keys(entry).length === 0)) return 'optional';
  return security.some((entry) => 'adminKey' in entry) ? 'admin' : 'bearer';
}

/** The operations of an OpenAPI 3.1 document as `/openapi.json` serves it. */
export function operationsOf(document: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      const parameters: any[] = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const upper = method.toUpperCase();
      operations.push({
        method: upper,
        path,
        pathParams: parameters
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => ({ name: parameter.name, schema: parameter.schema, resource: resourceOf(path, parameter.name) })),
        query: parameters.filter((parameter) => parameter.in === 'query').map((parameter) => ({ name: parameter.name, schema: parameter.schema })),
        body: content['application/json']?.schema,
        multipart: content['multipart/form-data']?.schema,
        auth: authOf(operation.security),
        mutates: upper !== 'GET',
      });
    }
  }
  return operations;
}

/** Routes registered with `hide: true` (found in src/features/*\/*.routes.ts and src/app.ts). */
export function hiddenOperations(operations: Operation[]): Operation[] {
  const grant = operations.find((operation) => operation.path === '/v2/auth/access-tokens');
  const plain = (method: string, path: string, pathParams: Parameter[] = []): Operation => ({
    method,
    path,
    pathParams,
    query: [],
    auth: 'none',
    mutates: false,
  });
  return [
    ...(grant ? [{ ...grant, path: '/api/v2/auth/access-tokens' }] : []),
    plain('GET', '/openapi.json'),
    plain('GET', '/metrics'),
    plain('GET', '/docs'),
    plain('OPTIONS', '/api/v2/query'),
    plain('OPTIONS', '/api/v2/queries/{queryId}/feedback', [{ name: 'queryId', schema: { type: 'string', format: 'uuid' }, resource: 'query' }]),
  ];
}
