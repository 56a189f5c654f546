import type { FieldError } from '../../core/errors.ts';
import { pointerSegment } from '../../core/http/validation-messages.ts';
import { MASKED, type Tool } from './tool.schema.ts';

/** A tool as reads show it: every header value replaced by MASKED. */
export function maskedTool(tool: Tool): Tool {
  if (!tool.http.headers) return tool;
  const headers = Object.fromEntries(Object.keys(tool.http.headers).map((name) => [name, MASKED]));
  return { ...tool, http: { ...tool.http, headers } };
}

/**
 * The tools of a change with each MASKED header value replaced by the value stored for the same
 * header of the tool of the same name, so that a client that read the tools can send them back
 * unchanged. A MASKED value with nothing stored behind it is an error, not a header that says
 * "***". Header names compare case-insensitively, as HTTP's do.
 */
export function unmaskedTools(tools: readonly Tool[], stored: readonly Tool[]): { tools: Tool[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const unmasked = tools.map((tool, index) => {
    if (!tool.http.headers) return tool;
    const storedHeaders = Object.entries(stored.find((candidate) => candidate.name === tool.name)?.http.headers ?? {});
    const headers = Object.fromEntries(
      Object.entries(tool.http.headers).map(([name, value]) => {
        if (value !== MASKED) return [name, value];
        const kept = storedHeaders.find(([storedName]) => storedName.toLowerCase() === name.toLowerCase());
        if (!kept) errors.push({ path: `/tools/${index}/http/headers/${pointerSegment(name)}`, message: `is "${MASKED}", but tool ${tool.name} has no stored value of this header to keep` });
        return [name, kept?.[1] ?? value];
      }),
    );
    return { ...tool, http: { ...tool.http, headers } };
  });
  return { tools: unmasked, errors };
}
