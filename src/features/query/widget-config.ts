/**
 * GET /api/v2/experiences/{id}/widget: what the chat widget shows before any question (name,
 * avatar, greeting, starter questions, the image hosts answers may show, the handover button),
 * under the query's access rules, CORS and rate limits: a page that may not ask may not read it.
 */
import { Type, type Static } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { IdParams, responses, Uuid } from '../../core/http/schemas.ts';
import type { Action } from '../experiences/action.schema.ts';
import type { Experience } from '../experiences/experiences.schemas.ts';
import { installWidgetCors } from './cors.ts';
import { authorizeExperienceCall } from './experience-access.ts';
import type { QueryRateLimit } from './rate-limits.ts';

const nullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

export const WidgetConfigSchema = Type.Object({
  experienceId: Uuid,
  assistantName: nullableString('The panel heading; null: the widget\'s data-title.'),
  avatarUrl: nullableString('An https image shown beside answers.'),
  greeting: nullableString('The first message of a new conversation (plain text).'),
  starterQuestions: Type.Array(Type.String(), { description: 'At most four questions offered as buttons until one is asked.' }),
  imageHosts: Type.Array(Type.String(), { description: 'Hosts (or *.domain) whose https images answers may show; others are links.' }),
  handover: Type.Union(
    [
      Type.Object({
        actionId: Type.String(),
        label: Type.String(),
        agentType: nullableString('Carried by the lore:handover event, as from the action\'s button under an answer.'),
      }),
      Type.Null(),
    ],
    { description: 'The experience\'s first trigger_handover action, shown as a button at all times; null: none.' },
  ),
});

export type WidgetConfig = Static<typeof WidgetConfigSchema>;

/** The presentation part of an experience: nothing beyond what its widget shows or dispatches. */
export function widgetConfig(experience: Experience): WidgetConfig {
  const widget = experience.settings.widget ?? {};
  // Stored actions were validated as Actions when the experience was written.
  const handover = (experience.actions as Action[]).find((action) => action.action.type === 'trigger_handover');
  return {
    experienceId: experience.id,
    assistantName: widget.assistantName ?? null,
    avatarUrl: widget.avatarUrl ?? null,
    greeting: widget.greeting ?? null,
    starterQuestions: widget.starterQuestions ?? [],
    imageHosts: widget.imageHosts ?? [],
    handover: handover ? { actionId: handover.id, label: handover.label, agentType: (handover.action.agentType as string | undefined) ?? null } : null,
  };
}

/** Registers the route beside the query's, sharing its rate limiter. */
export function registerWidgetConfigRoute(app: App, context: AppContext, rateLimit: QueryRateLimit): void {
  const path = '/api/v2/experiences/:id/widget';
  const cors = installWidgetCors(app, [path], 'GET');
  app.get(
    path,
    {
      onSend: cors.onSend,
      schema: {
        tags: ['query', 'experiences'],
        security: [{}, { bearerAuth: [] }],
        summary: 'The chat widget\'s presentation of an experience (public under the same rules as a query)',
        description:
          'Answers whoever may query the experience: the same origin checks, token requirement and rate limits as `POST /api/v2/query`, ' +
          'counted in budgets of its own. Holds only what the widget shows.',
        params: IdParams,
        response: responses({ 200: WidgetConfigSchema }, [400, 401, 403, 404, 429]),
      },
    },
    async (request) => {
      const caller = await authorizeExperienceCall(context, request, request.params.id);
      await rateLimit(request, caller, undefined, 'widget-config');
      return widgetConfig(caller.experience);
    },
  );
}
