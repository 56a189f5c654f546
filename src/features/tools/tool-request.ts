import type { FieldError } from '../../core/errors.ts';
import { targetProblem, type TargetRules } from '../webhooks/target-url.ts';
import { parameterNames } from './tool-parameters.ts';
import type { Tool } from './tool.schema.ts';

/** What tools may call (TOOLS_ALLOW_HTTP, TOOLS_ALLOW_PRIVATE_TARGETS). */
export type ToolTargetRules = { allowHttp: boolean; allowPrivateTargets: boolean };

const toolSettings = { http: 'TOOLS_ALLOW_HTTP', privateTargets: 'TOOLS_ALLOW_PRIVATE_TARGETS' };

const PLACEHOLDER = /\{([A-Za-z0-9_-]+)\}/g;

/** The `{name}` placeholders of a URL or template, in order. */
export function placeholdersOf(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => match[1]!);
}

/** `text` with each `{name}` placeholder replaced by `fill(name)`. */
export function fillPlaceholders(text: string, fill: (name: string) => string): string {
  return text.replace(PLACEHOLDER, (_, name: string) => fill(name));
}

/** The rules of webhook targets, applied to tools with the tools' own settings. */
export function targetRules(rules: ToolTargetRules): TargetRules {
  return { ...rules, settings: toolSettings };
}

/**
 * What is wrong with a tool's URL (paths under `at`): the target rules of webhooks (https unless
 * TOOLS_ALLOW_HTTP, no credentials, no literal private address unless TOOLS_ALLOW_PRIVATE_TARGETS),
 * placeholders that are declared parameters, and none in the scheme, host or port: an argument,
 * which a visitor's question or a model chooses, must not choose which server is called.
 */
export function urlProblems(tool: Tool, at: string, rules: ToolTargetRules): FieldError[] {
  const path = `${at}/http/url`;
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(tool.http.url)?.[0] ?? '';
  if (origin.includes('{')) return [{ path, message: 'must not have a placeholder in its scheme, host or port' }];
  const problem = targetProblem(tool.http.url.replace(PLACEHOLDER, 'x'), targetRules(rules));
  if (problem) return [{ path, message: problem }];
  const names = parameterNames(tool.parameters);
  return placeholdersOf(tool.http.url)
    .filter((name) => !names.includes(name))
    .map((name) => ({ path, message: `has the placeholder {${name}}, which is not among the parameters' properties` }));
}

/** A parameter's value as text: strings as they are, other values as JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The HTTP request a call makes: the URL filled, the other arguments as query string or JSON body. */
export function toolRequest(tool: Tool, args: Record<string, unknown>): { url: URL; body: string | undefined } {
  const inUrl = new Set(placeholdersOf(tool.http.url));
  const url = new URL(fillPlaceholders(tool.http.url, (name) => (args[name] === undefined ? '' : encodeURIComponent(valueText(args[name])))));
  const rest = Object.entries(args).filter(([name, value]) => !inUrl.has(name) && value !== undefined);
  if (tool.http.method === 'POST') return { url, body: JSON.stringify(Object.fromEntries(rest)) };
  for (const [name, value] of rest) {
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, valueText(item));
  }
  return { url, body: undefined };
}
