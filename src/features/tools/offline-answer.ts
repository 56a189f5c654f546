import { targetAgents, type TargetAgents } from '../webhooks/send-webhook.ts';
import type { ToolMatch } from './match-tool.ts';
import { failedLookupAnswer, toolAnswer } from './tool-answer.ts';
import { argumentProblems } from './tool-parameters.ts';
import type { ToolTargetRules } from './tool-request.ts';
import { ToolRunner } from './tool-runner.ts';
import type { Tool } from './tool.schema.ts';

// One pair of agents per setting, for the process: they keep no connections (keep-alive is off,
// so that each connection's address is screened), only their options.
const agents = new Map<boolean, TargetAgents>();

/** The runner of one answer's tool calls, with the process's agents for `rules`. */
export function toolRunner(tools: readonly Tool[], rules: ToolTargetRules): ToolRunner {
  let pair = agents.get(rules.allowPrivateTargets);
  if (!pair) {
    pair = targetAgents(rules.allowPrivateTargets);
    agents.set(rules.allowPrivateTargets, pair);
  }
  return new ToolRunner(tools, pair);
}

/** The offline answer to a question that matched a tool, and whether it answered the question. */
export type OfflineToolAnswer = { answer: string; answered: boolean };

/**
 * Answers offline a question that matched a tool with every required argument: calls the tool
 * and fills its answer template; a failed call says that the lookup failed (and is not an answer,
 * so the experience's handover action shows). Undefined when the arguments found do not pass the
 * parameters as a whole: the question does not trigger the tool.
 */
export async function offlineToolAnswer(runner: ToolRunner, match: ToolMatch, signal?: AbortSignal): Promise<OfflineToolAnswer | undefined> {
  const { tool, args } = match;
  if (argumentProblems(tool.parameters, args).length > 0) return undefined;
  const response = await runner.call(tool, args, signal);
  const answer = response.call.outcome === 'succeeded' ? toolAnswer(tool, args, response) : undefined;
  if (answer === undefined) {
    if (response.call.outcome === 'succeeded') {
      // The call worked but its response lacks what the template names: recorded as failed.
      response.call.outcome = 'failed';
      response.call.error = 'The response has no value for a placeholder of the answer template.';
    }
    return { answer: failedLookupAnswer(tool), answered: false };
  }
  return { answer, answered: true };
}
