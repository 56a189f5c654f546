import { parameterSchema } from './tool-parameters.ts';
import { fillPlaceholders, placeholdersOf, valueText } from './tool-request.ts';
import type { Tool } from './tool.schema.ts';
import { isRecord } from '../../core/is-record.ts';

// How much of a response the answer without a template shows: a lookup's record, not a dump.
const MAX_LISTED_FIELDS = 12;


/** The values a template may name: the call's arguments, then the JSON response's top-level fields (which win). */
function templateValues(args: Record<string, unknown>, json: unknown): Map<string, unknown> {
  return new Map([...Object.entries(args), ...(isRecord(json) ? Object.entries(json) : [])]);
}

/** Markdown-escapes a value from a response: an API's text must not become links or markup in the widget. */
function escaped(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, (character) => `\\${character}`);
}

/**
 * The offline answer from a successful call: `answerTemplate` with every placeholder filled, or
 * undefined when one names a value neither the arguments nor the response have (an answer with a
 * hole would state something the API did not say). Without a template, the response's top-level
 * scalar fields as a list, or its text.
 */
export function toolAnswer(tool: Tool, args: Record<string, unknown>, response: { text: string | null; json: unknown }): string | undefined {
  const values = templateValues(args, response.json);
  if (tool.answerTemplate) {
    const missing = placeholdersOf(tool.answerTemplate).some((name) => values.get(name) === undefined || values.get(name) === null);
    if (missing) return undefined;
    return fillPlaceholders(tool.answerTemplate, (name) => escaped(valueText(values.get(name))));
  }
  if (isRecord(response.json)) {
    const fields = Object.entries(response.json).filter(([, value]) => value === null || typeof value !== 'object');
    if (fields.length === 0) return undefined;
    return fields
      .slice(0, MAX_LISTED_FIELDS)
      .map(([name, value]) => `- **${escaped(name)}**: ${escaped(valueText(value))}`)
      .join('\n');
  }
  const text = response.text?.trim();
  return text ? escaped(text) : undefined;
}

/** The answer when a lookup failed: said plainly, without the API's details (they are in the record). */
export function failedLookupAnswer(tool: Tool): string {
  return `I could not look that up right now (${tool.name} did not answer as expected). Please try again later.`;
}

/** What the offline answer asks for when a question matches a tool but lacks required arguments. */
export function missingArgumentsAnswer(tool: Tool, missing: readonly string[]): string {
  const named = missing.map((name) => {
    const description = parameterSchema(tool.parameters, name).description;
    return typeof description === 'string' && description.trim() ? `${description.trim()} (${name})` : name;
  });
  return `I can look that up for you: please tell me ${named.join(' and ')}.`;
}
