import { parameterNames, parameterSchema } from './tool-parameters.ts';

/** A value found in a question, with where it was found (one span fills one parameter). */
type Found = { value: unknown; start: number; end: number };

// JSON Schema patterns are not anchored unless they say so; a tool's pattern often is, to
// validate a whole value (`^[0-9]{4,10}$`). Found inside a question, it is searched for without
// its anchors and then validated whole against the schema.
function unanchored(pattern: string): RegExp | undefined {
  const source = pattern.replace(/^\^/, '').replace(/(?<!\\)\$$/, '');
  try {
    return new RegExp(source, 'gu');
  } catch {
    return undefined;
  }
}

const NUMBER = /[-+]?\d+(?:[.,]\d+)?/g;
const QUOTED = /"([^"]+)"|“([^”]+)”|'([^']+)'|`([^`]+)`/g;
const FORMATS: Record<string, RegExp> = {
  email: /[^\s@<>()"',;]+@[^\s@<>()"',;]+\.[A-Za-z]{2,}/g,
  date: /\b\d{4}-\d{2}-\d{2}\b/g,
  uuid: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
};

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The candidate values of one parameter in a question, in order of appearance. */
function candidates(schema: Record<string, unknown>, question: string): Found[] {
  const spans = (pattern: RegExp, value: (match: RegExpMatchArray) => unknown = (match) => match[0]) =>
    [...question.matchAll(pattern)].map((match) => ({ value: value(match), start: match.index, end: match.index + match[0].length }));
  if (Array.isArray(schema.enum)) {
    const options = schema.enum.filter((option): option is string | number => typeof option === 'string' || typeof option === 'number');
    return options
      .flatMap((option) => spans(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(String(option))}(?![\\p{L}\\p{N}])`, 'giu'), () => option))
      .sort((left, right) => left.start - right.start);
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    return spans(NUMBER, (match) => Number(match[0].replace(',', '.'))).filter(
      (found) => schema.type === 'number' || Number.isInteger(found.value),
    );
  }
  if (schema.type !== 'string' && schema.type !== undefined) return [];
  if (typeof schema.pattern === 'string') {
    const pattern = unanchored(schema.pattern);
    return pattern ? spans(pattern) : [];
  }
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return spans(format);
  return spans(QUOTED, (match) => match.slice(1).find((group) => group !== undefined));
}

/**
 * The arguments a question supplies for a tool's parameters, for the offline generator: an enum's
 * value named in the question, a number, the first match of a string's `pattern`, a value of a
 * known `format` (email, date, uuid), else a quoted string. Each span of the question fills at
 * most one parameter, in the order the parameters are declared; each value must pass the
 * parameter's own schema (the caller validates the whole object). Parameters are looked for in
 * `texts` in order: the latest message first, then the question with its conversation.
 */
export function extractArguments(parameters: Record<string, unknown>, texts: readonly string[], accepts: (name: string, value: unknown) => boolean): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const used = texts.map(() => [] as { start: number; end: number }[]);
  for (const name of parameterNames(parameters)) {
    const schema = parameterSchema(parameters, name);
    for (const [index, text] of texts.entries()) {
      const taken = used[index]!;
      const found = candidates(schema, text).find(
        (candidate) => !taken.some((span) => candidate.start < span.end && span.start < candidate.end) && accepts(name, candidate.value),
      );
      if (found) {
        args[name] = found.value;
        taken.push(found);
        break;
      }
    }
  }
  return args;
}
