import type { App } from '../../core/http/app-types.ts';
import { responses } from '../../core/http/schemas.ts';
import { htmlDocument } from './bundles.ts';

/** The pages a person opening the server's address looks for, with what each is (also printed at the first start). */
export const homeLinks = [
  { path: '/console', name: 'Operator console', about: 'sign in with a client id and secret to see knowledge bases, jobs, experiences, sessions and webhooks' },
  { path: '/demo', name: 'Widget demo', about: 'the chat widget on the first start’s default experience (/demo?experienceId=… for another)' },
  { path: '/docs', name: 'API reference', about: 'every route with its request and response schemas (the document itself: /openapi.json)' },
] as const;

/**
 * A static page: it names no workspace and reads no database, so it tells a visitor of a shared
 * server nothing but where the public pages are, and costs a load balancer's probe nothing.
 */
function homePage(): string {
  const items = homeLinks.map((link) => `<li><a href="${link.path}">${link.name}</a>: ${link.about}.</li>`).join('\n');
  const body = `<main>
<h1>lore</h1>
<p>Answers questions from a knowledge base, and imports content in bulk.</p>
<ul>
${items}
</ul>
</main>`;
  const head = '<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}li{margin:.5rem 0}</style>\n';
  return htmlDocument('lore', body, head);
}

/** GET /: a small page linking the console, the widget demo and the API reference. */
export function registerHomeRoutes(app: App): void {
  const page = homePage();
  app.get('/', { schema: { tags: ['web'], summary: 'A page linking the console, the widget demo and the API reference', response: responses({}, []) } }, async (_request, reply) => {
    void reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    return page;
  });
}
