import { targetAgents, type TargetAgents } from '../webhooks/send-webhook.ts';
import type { ToolMatch } from './match-tool.ts';
import { failedLookupAnswer, missingArgumentsAnswer, toolAnswer } from './tool-answer.ts';
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
 * Answers a matched question offline: asks for the required arguments the question lacks, or
 * calls the tool and fills its answer template; a failed call says that the lookup failed (and is
 * not an answer, so the experience's handover action shows).
 */
export async function offlineToolAnswer(runner: ToolRunner, match: ToolMatch, signal?: AbortSignal): Promise<OfflineToolAnswer> {
  const { tool, args } = match;
  const invalid = argumentProblems(tool.parameters, args).length > 0;
  if (match.missing.length > 0 || invalid) return { answer: missingArgumentsAnswer(tool, match.missing.length > 0 ? match.missing : Object.keys(args)), answered: true };
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
