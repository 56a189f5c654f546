import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FieldError } from '../../core/errors.ts';
import { describeSchemaErrors } from '../../core/http/validation-messages.ts';
import { MAX_PARAMETERS } from './tool.schema.ts';

// A tool's parameters are JSON Schema 2020-12, the dialect of OpenAPI 3.1 and of OpenAI's function
// tools. `allErrors` so that a model told why its call failed can fix every argument at once;
// `strict: false` because operators paste schemas written for other validators (with
// `examples`, `x-` keywords), which are annotations, not errors.
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false, logger: false });
addFormats.default(ajv);

// Compiled validators by schema text: an experience's tools are the same on every query, and 16
// tools × a few hundred experiences in one process is well under this bound.
const COMPILED = 1024;
const compiled = new Map<string, ValidateFunction>();

function validatorOf(parameters: object): ValidateFunction {
  const key = JSON.stringify(parameters);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(parameters);
    compiled.set(key, validate);
    if (compiled.size > COMPILED) compiled.delete(compiled.keys().next().value!);
  }
  return validate;
}

/** The property names a tool's parameters declare. */
export function parameterNames(parameters: Record<string, unknown>): string[] {
  const properties = parameters.properties;
  return properties && typeof properties === 'object' && !Array.isArray(properties) ? Object.keys(properties) : [];
}

/** The schema of one declared parameter ({} when it declares none). */
export function parameterSchema(parameters: Record<string, unknown>, name: string): Record<string, unknown> {
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  const schema = properties[name];
  return schema && typeof schema === 'object' ? (schema as Record<string, unknown>) : {};
}

/** The required parameters. */
export function requiredParameters(parameters: Record<string, unknown>): string[] {
  return Array.isArray(parameters.required) ? parameters.required.filter((name): name is string => typeof name === 'string') : [];
}

/**
 * What is wrong with a tool's `parameters` as a schema, with paths under `at`: it must be a valid
 * JSON Schema (the 2020-12 meta-schema, and one that compiles: a `pattern` must be a regular
 * expression), of type object, with at most MAX_PARAMETERS properties.
 */
export function parametersProblems(parameters: Record<string, unknown>, at: string): FieldError[] {
  if (parameters.type !== 'object') return [{ path: `${at}/type`, message: 'must be "object": a tool takes named arguments' }];
  const names = parameterNames(parameters);
  if (names.length > MAX_PARAMETERS) return [{ path: `${at}/properties`, message: `must declare at most ${MAX_PARAMETERS} parameters (it declares ${names.length})` }];
  if (!ajv.validateSchema(parameters)) {
    return describeSchemaErrors(ajv.errors ?? [], at).map((error) => ({ ...error, message: `${error.message} (JSON Schema 2020-12)` }));
  }
  try {
    validatorOf(parameters);
  } catch (error) {
    return [{ path: at, message: `is not a schema that can be used: ${(error as Error).message}` }];
  }
  const undeclared = requiredParameters(parameters).filter((name) => !names.includes(name));
  return undeclared.map((name) => ({ path: `${at}/required`, message: `names ${name}, which is not among the properties` }));
}

/** The problems of a call's arguments against a tool's parameters (paths under `at`); none: valid. */
export function argumentProblems(parameters: Record<string, unknown>, args: unknown, at = ''): FieldError[] {
  const validate = validatorOf(parameters);
  return validate(args) ? [] : describeSchemaErrors(validate.errors ?? [], at);
}
