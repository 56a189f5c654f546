/**
 * A synthetic help center for the query benchmark: articles of about 2 KB, each about one topic
 * (a subject such as "invoice" in an area such as "the mobile app"), and questions about those
 * topics. bench/corpus.ts recombines 30 fixed sentences, so every term of a question occurs in a
 * quarter or more of its chunks; at 100,000 chunks that makes every keyword search rank most of
 * the table, which no real knowledge base does. Here a subject occurs in about 1 % of the
 * articles, an area in about 2.5 % and a verb in about an eighth of the chunks, while the other
 * words of the sentence templates are common to all, as the vocabulary of a real help center is.
 */
import { random } from './corpus.ts';

const subjects = [
  'password', 'invoice', 'webhook', 'export', 'API key', 'access token', 'two-factor code', 'shared folder', 'guest account',
  'audit log', 'backup', 'calendar event', 'custom domain', 'email template', 'payment method', 'refund', 'subscription',
  'team role', 'single sign-on', 'data retention policy', 'notification', 'dashboard', 'scheduled report', 'tag', 'label',
  'comment', 'attachment', 'signature', 'time zone', 'language setting', 'billing address', 'tax number', 'discount code',
  'usage quota', 'storage limit', 'import file', 'CSV template', 'integration', 'Slack channel', 'Zapier trigger',
  'mobile notification', 'offline copy', 'workspace owner', 'invitation link', 'profile picture', 'display name',
  'phone number', 'recovery code', 'session timeout', 'IP allowlist', 'encryption key', 'SAML certificate', 'SCIM token',
  'user group', 'permission set', 'approval flow', 'form field', 'survey', 'chat widget', 'greeting message', 'knowledge base',
  'search index', 'article draft', 'translation', 'product catalogue', 'shipping label', 'tracking number', 'return label',
  'purchase order', 'quote', 'receipt', 'credit note', 'currency', 'price list', 'coupon', 'gift card', 'loyalty points',
  'appointment', 'booking page', 'reminder email', 'video call link', 'meeting room', 'project board', 'task list',
  'milestone', 'time entry', 'expense report', 'contract', 'e-signature', 'document version', 'folder permission',
  'public link', 'embed code', 'custom field', 'automation rule', 'status page', 'incident report', 'support ticket',
];

const areas = [
  'the mobile app', 'the admin console', 'the billing page', 'the desktop client', 'the web editor', 'the reporting module',
  'the customer portal', 'the partner dashboard', 'the developer settings', 'the security centre', 'the team settings',
  'the storefront', 'the checkout', 'the help widget', 'the calendar view', 'the inbox', 'the analytics overview',
  'the integrations marketplace', 'the onboarding wizard', 'the account menu', 'the project workspace', 'the file manager',
  'the sales pipeline', 'the invoicing module', 'the warehouse app', 'the booking system', 'the survey builder',
  'the form designer', 'the public API', 'the command line tool', 'the browser extension', 'the tablet app',
  'the kiosk mode', 'the partner API', 'the audit centre', 'the data export tool', 'the notification centre',
  'the translation editor', 'the template gallery', 'the automation studio',
];

// What a sentence or a question does to its subject: sixty verbs, so that one occurs in about an
// eighth of the chunks, as a common verb of a real help center does.
const verbs = [
  'rename', 'archive', 'duplicate', 'export', 'import', 'restore', 'lock', 'unlock', 'share', 'print', 'download', 'upload',
  'approve', 'reject', 'schedule', 'publish', 'unpublish', 'translate', 'merge', 'split', 'sort', 'filter', 'pin', 'tag',
  'transfer', 'assign', 'escalate', 'close', 'reopen', 'review', 'sign', 'verify', 'sync', 'back up', 'encrypt', 'revoke',
  'renew', 'cancel', 'pause', 'resume', 'audit', 'preview', 'embed', 'link', 'follow', 'mute', 'star', 'flag', 'hide',
  'rotate', 'refresh', 'reset', 'delete', 'edit', 'create', 'copy', 'move', 'search', 'compare', 'invite',
];

// Sentence templates: {s} is the subject, {a} the area, {v} a verb, {n} a number. Their other
// words (open, menu, settings, workspace...) are the common vocabulary of every article.
const templates = [
  'To {v} the {s} in {a}, open its menu and choose the matching action.',
  'Only administrators can {v} a {s} in {a}; other members see the option greyed out.',
  'After you {v} a {s}, {a} shows the change within {n} seconds.',
  'If you cannot {v} the {s} in {a}, sign out, sign in again and refresh the page.',
  'You can {v} every {s} of {a} at once from the bulk actions bar.',
  'Members with the editor role can {v} a {s} but only in their own projects.',
  'When you {v} a {s}, {a} records the action in the audit log with your name.',
  'Guests invited to {a} cannot {v} a {s}; ask an administrator instead.',
  'The public API can {v} a {s} of {a} exactly as the interface does.',
  'If {a} answers "limit reached" when you {v} a {s}, archive older items or upgrade the plan.',
  'Each workspace can {v} a {s} up to {n} times per day in {a}.',
  'A webhook can tell your own system whenever someone chose to {v} a {s} in {a}.',
  'To {v} several at once, select each {s} in {a} and use the toolbar.',
  'Support can {v} a {s} on your behalf during the first {n} days.',
  'Keyboard shortcuts in {a} let you {v} a {s} without the mouse.',
  'A {s} that failed to {v} is marked with a red icon in {a} and retried after {n} minutes.',
  'The owner of a {s} is notified whenever someone tries to {v} it in {a}.',
  'The right to {v} a {s} follows the permissions of the workspace.',
  'A new {s} appears in {a} within {n} seconds after it is saved.',
  'When a {s} is removed, {a} keeps a copy in the trash for {n} days.',
  'The {s} settings of {a} are synchronised with the other apps of the workspace every few minutes.',
  'Old versions of a {s} are kept for {n} days and can be compared side by side in {a}.',
  'If payment fails, {a} keeps every {s} readable but blocks new changes until the invoice is paid.',
  'Every {s} in {a} has an owner, and ownership moves to the workspace admin when its owner leaves.',
];

const headings = ['Overview', 'Before you start', 'Steps', 'Limits', 'Troubleshooting', 'Permissions', 'Security', 'Related settings', 'Frequently asked'];

const titles = ['How to {v} the {s} in {a}', 'Troubleshooting: cannot {v} the {s} in {a}', 'Who can {v} a {s} in {a}', 'Limits when you {v} a {s} in {a}'];

const questionTemplates = [
  'How do I {v} the {s} in {a}?',
  'Can I {v} a {s} from {a}?',
  'Who can {v} the {s} in {a}?',
  "Why can't I {v} my {s} in {a}?",
  'Is it possible to {v} a {s} in {a}?',
  'What happens when I {v} a {s} in {a}?',
  'How often can I {v} a {s} in {a}?',
  'Can support {v} my {s} in {a}?',
]

export const topicCount = subjects.length * areas.length;

function topic(index: number): { s: string; a: string } {
  return { s: subjects[index % subjects.length]!, a: areas[Math.floor(index / subjects.length) % areas.length]! };
}

function fill(template: string, slots: { s: string; a: string }, n: number, verb: string): string {
  const sentence = template.replaceAll('{s}', slots.s).replaceAll('{a}', slots.a).replaceAll('{n}', String(n)).replaceAll('{v}', verb);
  const article = sentence.replace(/\b([Aa]) (?=[aeiouAEIOU])/g, '$1n ');
  return article[0]!.toUpperCase() + article.slice(1);
}

/** Article `seed` (deterministic): a title naming its topic, then sections of two or three paragraphs, about `size` characters. */
export function article(seed: number, size: number): { title: string; content: string } {
  const next = random(seed);
  // Articles spread over the topics with a stride coprime to their count, so neighbours differ.
  const slots = topic((seed * 7919) % topicCount);
  const title = `${fill(titles[seed % titles.length]!, slots, 0, verbs[seed % verbs.length]!)} (article ${seed})`;
  let content = `# ${title}\n\n`;
  while (content.length < size) {
    content += `## ${headings[Math.floor(next() * headings.length)]}\n\n`;
    const paragraphs = 2 + Math.floor(next() * 2);
    for (let paragraph = 0; paragraph < paragraphs && content.length < size; paragraph += 1) {
      const count = 3 + Math.floor(next() * 3);
      const words: string[] = [];
      for (let sentence = 0; sentence < count; sentence += 1) {
        const template = templates[Math.floor(next() * templates.length)]!;
        words.push(fill(template, slots, 2 + Math.floor(next() * 60), verbs[Math.floor(next() * verbs.length)]!));
      }
      content += `${words.join(' ')}\n\n`;
    }
  }
  return { title, content: content.trimEnd() };
}

/** `count` distinct questions (deterministic from `seed`) about the topics of the first `articles` articles. */
export function helpQuestions(count: number, articles: number, seed: number): string[] {
  const next = random(seed);
  const seen = new Set<string>();
  const out: string[] = [];
  const topics = Math.min(articles, topicCount);
  while (out.length < count && seen.size < topics * questionTemplates.length * verbs.length) {
    const articleSeed = 1 + Math.floor(next() * articles);
    const template = questionTemplates[Math.floor(next() * questionTemplates.length)]!;
    const text = fill(template, topic((articleSeed * 7919) % topicCount), 0, verbs[Math.floor(next() * verbs.length)]!);
    if (seen.has(text)) continue;
    seen.add(text);
    out.push(text);
  }
  return out;
}
