import { Type, type TSchema } from 'typebox';

/** The spec's error body, referenced by every route's 4xx/5xx responses in the OpenAPI document. */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'The status name.' }),
    message: Type.String(),
    timestamp: Type.String({ format: 'date-time' }),
    path: Type.String({ description: 'The request path without the /api prefix.' }),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    required: Type.Optional(Type.Array(Type.String())),
    missing: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'ErrorBody', additionalProperties: true },
);

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const IdParams = Type.Object({ id: Uuid });

/** A string with a fixed set of values (JSON Schema `enum`, which reports clearer errors than a union). */
export function StringEnum<const T extends string>(values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: values, ...options });
}

const errorRef = Type.Unsafe({ $ref: 'ErrorBody#' });

/** Response schemas of a route: its success bodies plus the error body for each listed status. */
export function responses(success: Record<number, TSchema>, errorStatuses: number[] = []): Record<number, TSchema> {
  const all: Record<number, TSchema> = { ...success };
  for (const status of [...errorStatuses, 500]) all[status] = errorRef;
  return all;
}

/** Statuses every bearer-guarded route can answer. */
export const guardedErrors = [400, 401, 403];

/**
 * `limit` and `offset` of every list endpoint: 1 to 100 (default 20) and at least 0 (default 0).
 * The offset's bound is the largest integer a number holds exactly: `?offset=1e20` has lost its
 * digits before it reaches us, so it is refused rather than rounded (PostgreSQL's OFFSET is int8).
 */
export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }),
};

/** A page of a list: `{total, <items>}`. */
export function Page<Name extends string, Item extends TSchema>(name: Name, item: Item) {
  return Type.Object({ total: Type.Integer(), [name]: Type.Array(item) } as { total: ReturnType<typeof Type.Integer> } & Record<Name, ReturnType<typeof Type.Array<Item>>>);
}
