import type { AppContext } from '../../core/context.ts';
import { createClient } from '../access-token-clients/clients.service.ts';
import { createExperience } from '../experiences/experiences.service.ts';
import { createKnowledgeBase } from '../knowledge-bases/knowledge-bases.service.ts';
import { homeLinks } from '../web/home.routes.ts';
import { createWorkspace } from './workspaces.service.ts';

/** What the first start created, for the block printed to the operator. */
export type FirstStart = {
  workspaceId: string;
  knowledgeBaseId: string;
  experienceId: string;
  clientId: string;
  clientSecret: string;
};

/**
 * On an empty embedded database, creates a `default` workspace with a knowledge base, a public
 * experience and a client holding every scope, so that a fresh clone goes from `npm start` to a
 * token without reading code. Returns undefined when there is already a workspace.
 */
export async function firstStart(context: AppContext): Promise<FirstStart | undefined> {
  const { db, config } = context;
  if (db.engine !== 'pglite' || config.bootstrap !== 'auto') return undefined;
  const { rows } = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM workspaces) AS any');
  if (rows[0]?.any) return undefined;
  const workspace = await createWorkspace(db, 'default');
  const knowledgeBase = await createKnowledgeBase(db, workspace.id, { name: 'default', description: 'Created at first start.' });
  const experience = await createExperience(db, workspace.id, { name: 'default', knowledgeBaseIds: [knowledgeBase.id] }, config.tools);
  const { client, clientSecret } = await createClient(db, workspace.id, { name: 'default', scopes: ['*'] });
  return {
    workspaceId: workspace.id,
    knowledgeBaseId: knowledgeBase.id,
    experienceId: experience.id,
    clientId: client.clientId,
    clientSecret,
  };
}

/**
 * The block's example question: one that samples/debian-docs.json answers, and whose answer's
 * first sentence is the answer (test/first-start.test.ts asks it). "What is lore?", the question
 * it replaced, got the fallback: the sample does not mention lore.
 */
const sampleQuestion = 'How do I build Redis with TLS support?';

/** The first-start block: the ids, the credentials (shown this once) and the commands to paste: load the sample, get a token, ask. */
export function firstStartBlock(created: FirstStart, baseUrl: string): string {
  return [
    '',
    '================================ lore: first start ================================',
    'Created on this empty database (the client secret is shown only now; keep it):',
    `  workspace       ${created.workspaceId}`,
    `  knowledge base  ${created.knowledgeBaseId}`,
    `  experience      ${created.experienceId}  (public)`,
    `  client id       ${created.clientId}`,
    `  client secret   ${created.clientSecret}`,
    '',
    'Get an access token:',
    `  curl -s ${baseUrl}/v2/auth/access-tokens -d grant_type=client_credentials \\`,
    `    -d client_id=${created.clientId} -d client_secret=${created.clientSecret}`,
    '',
    'Load the sample into the default knowledge base (31 sections of the READMEs of Redis and',
    'postgresql-common that Debian ships; run it in the repository):',
    `  npx lore ingest samples/debian-docs.json --kb ${created.knowledgeBaseId} --adapter generic-json \\`,
    `    --url ${baseUrl} --client-id ${created.clientId} --client-secret ${created.clientSecret}`,
    '',
    'Then ask the default experience a question the sample answers:',
    `  curl -s ${baseUrl}/api/v2/query -H 'content-type: application/json' \\`,
    `    -d '{"experienceId":"${created.experienceId}","text":"${sampleQuestion}"}'`,
    '',
    `Open in a browser (${baseUrl}/ links them too):`,
    ...homeLinks.map((link) => `  ${`${baseUrl}${link.path}`.padEnd(baseUrl.length + 10)} ${link.name}`),
    '====================================================================================',
    '',
  ].join('\n');
}
