import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, responses, Uuid } from '../../core/http/schemas.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import { authorize, caller } from '../auth/guard.ts';
import { toolRunner } from '../tools/offline-answer.ts';
import { toolAnswer } from '../tools/tool-answer.ts';
import { argumentProblems } from '../tools/tool-parameters.ts';
import { MAX_TOOL_MESSAGE_CHARS } from '../tools/tool-runner.ts';
import { ToolCallSchema } from '../tools/tool.schema.ts';
import { getExperience } from './experiences.service.ts';

const ToolTestResultSchema = Type.Object({
  call: ToolCallSchema,
  response: Type.Union([Type.String(), Type.Null()], { description: `The API's body (at most ${MAX_TOOL_MESSAGE_CHARS} characters); null when the call failed.` }),
  answer: Type.Union([Type.String(), Type.Null()], { description: 'The offline answer the call gives (answerTemplate filled); null when it gives none.' }),
});

/**
 * `POST /api/v2/experiences/{id}/tools/{name}/test`: calls a stored tool with sample arguments, as
 * an answer would, and shows what came back: the console's "test this tool" button. It needs
 * `experiences:write`, like a change of the tool: it sends the tool's stored headers. The call is
 * not recorded with any session.
 */
export function registerToolTestRoute(app: App, context: AppContext): void {
  app.post(
    '/api/v2/experiences/:id/tools/:name/test',
    {
      onRequest: authorize(context, ['experiences:write']),
      schema: {
        tags: ['experiences'],
        security: [{ bearerAuth: [] }],
        summary: 'Call a tool of an experience with sample arguments',
        params: Type.Object({ id: Uuid, name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) }),
        body: Type.Object({ arguments: Type.Record(Type.String(), Type.Unknown()) }, { additionalProperties: false }),
        response: responses({ 200: ToolTestResultSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const experience = await getExperience(context.db, caller(request), request.params.id);
      const tool = experience.tools.find((candidate) => candidate.name === request.params.name);
      if (!tool) throw notFound('Tool', request.params.name);
      const problems = argumentProblems(tool.parameters, request.body.arguments, '/arguments');
      if (problems.length > 0) throw validationError(problems);
      const response = await toolRunner([tool], context.config.tools).call(tool, request.body.arguments);
      const succeeded = response.call.outcome === 'succeeded';
      return {
        call: response.call,
        response: succeeded ? (response.text ?? '').slice(0, MAX_TOOL_MESSAGE_CHARS) : null,
        answer: (succeeded && toolAnswer(tool, request.body.arguments, response)) || null,
      };
    },
  );
}
