import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { Db } from '../../core/db/db.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { responses, Uuid } from '../../core/http/schemas.ts';
import { escapeHtml, htmlDocument, loadBundle, serveBundle, servePage } from './bundles.ts';
import { registerHomeRoutes } from './home.routes.ts';

/**
 * The experience the first start created (workspace `default`, experience `default`), which
 * `/demo` shows when no `experienceId` is given. Any other experience is only shown when named:
 * on a shared server, /demo must not pick some tenant's experience.
 */
async function defaultExperienceId(db: Db): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT e.id FROM experiences e JOIN workspaces w ON w.id = e.workspace_id
     WHERE w.name = 'default' AND e.name = 'default' AND e.deleted_at IS NULL
     ORDER BY w.created_at, e.created_at LIMIT 1`,
  );
  return rows[0]?.id;
}

/** The demo host page: some host content, the one-line embed, and a log of the widget's events. */
function demoPage(experienceId: string, origin: string): string {
  const body = `<main>
<h1>lore widget demo</h1>
<p>This page stands for any site embedding the chat widget with one script tag. Open the chat with the button at the bottom right.</p>
<pre><code>${escapeHtml(`<script src="${origin}/widget.js" data-experience-id="${experienceId}" async></script>`)}</code></pre>
<h2>Events from the widget</h2>
<ol id="events" aria-live="polite"></ol>
</main>
<script>
  // The host page's side of the widget's actions: trigger_handover and send_event arrive here.
  for (const name of ['lore:handover', 'lore:event']) {
    window.addEventListener(name, (event) => {
      const item = document.createElement('li');
      item.textContent = name + ' ' + JSON.stringify(event.detail);
      document.getElementById('events').append(item);
    });
  }
</script>
<script src="/widget.js" data-experience-id="${escapeHtml(experienceId)}" async></script>`;
  const head = '<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}</style>\n';
  return htmlDocument('lore widget demo', body, head);
}

/** GET / (links to the pages below), GET /widget.js (the embeddable chat widget), GET /demo (a host page embedding it) and GET /console (the operator console). */
export function registerWebRoutes(app: App, context: AppContext): void {
  registerHomeRoutes(app);
  serveBundle(app, 'widget');
  // The operator console (web/console/): a single-page app over the public API.
  servePage(app, '/console', { title: 'lore console', bundle: 'console' });
  // Its charts (uPlot), loaded by the Insights page when first opened.
  serveBundle(app, 'console-charts');

  app.get(
    '/demo',
    {
      schema: {
        tags: ['web'],
        summary: 'A demo page embedding the chat widget (the first-start experience unless experienceId is given)',
        querystring: Type.Object({ experienceId: Type.Optional(Uuid) }),
        response: responses({}, [400, 404, 503]),
      },
    },
    async (request, reply) => {
      await loadBundle('widget');
      const experienceId = request.query.experienceId ?? (await defaultExperienceId(context.db));
      if (!experienceId) {
        throw new AppError('NOT_FOUND', 'There is no first-start default experience; open /demo?experienceId=<an experience id>.');
      }
      void reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
      // The snippet to copy names this server as the page reached it (behind a proxy, the proxy's address).
      return demoPage(experienceId, `${request.protocol}://${request.host}`);
    },
  );
}
