import type { FieldError } from '../../core/errors.ts';
import { parametersProblems } from './tool-parameters.ts';
import { urlProblems, type ToolTargetRules } from './tool-request.ts';
import { DEFAULT_TOOL_TIMEOUT_MS, type Tool } from './tool.schema.ts';

/**
 * What the JSON schema of a tool cannot check, with paths under `/tools`: unique names, a
 * parameters object that is a usable JSON Schema, and a URL that may be called (tool-request.ts).
 */
export function toolsProblems(tools: readonly Tool[], rules: ToolTargetRules): FieldError[] {
  const seen = new Set<string>();
  return tools.flatMap((tool, index) => {
    const at = `/tools/${index}`;
    const problems: FieldError[] = [];
    if (seen.has(tool.name)) problems.push({ path: `${at}/name`, message: `duplicates the tool name ${tool.name}` });
    seen.add(tool.name);
    problems.push(...parametersProblems(tool.parameters, `${at}/parameters`), ...urlProblems(tool, at, rules));
    return problems;
  });
}

/** A tool as it is stored: its time limit written out, so that reads show the one that applies. */
export function withDefaults(tool: Tool): Tool {
  return { ...tool, http: { ...tool.http, timeoutMs: tool.http.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS } };
}
