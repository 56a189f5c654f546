/** Deterministic English text for the benchmarks: support-knowledge-base sentences recombined. */
import { random } from '../test/random.ts';

export const sentences = [
  'To reset your password, open the sign-in page and choose "Forgot password".',
  'A reset link is sent to the email address on your account and expires after one hour.',
  'Invoices are generated on the first business day of every month and can be downloaded as PDF files.',
  'Refunds are issued to the original payment method within five to ten business days.',
  'The API accepts up to one hundred requests per minute for each client before it answers with status 429.',
  'Each workspace has its own users, knowledge bases and access tokens, and nothing is shared between workspaces.',
  'If the export takes longer than expected, check the status page for ongoing incidents.',
  'Administrators can invite new members from the team settings and assign them a role.',
  'The mobile app keeps a copy of recent documents so that they stay readable without a connection.',
  'Two-factor authentication adds a one-time code from an authenticator app to every sign-in.',
  'When the database connection pool is exhausted, new requests wait until a connection is released.',
  'Webhooks are retried with exponential backoff for up to twenty-four hours after a failed delivery.',
  'Shipping to most European countries takes three to five days, and tracking numbers are emailed at dispatch.',
  'Customers on the annual plan receive a discount of two months compared with monthly billing.',
  'The search index is updated within a few seconds after a document is created or changed.',
  'Large files are uploaded in parts, so an interrupted upload resumes where it stopped.',
  'Audit logs record who changed a setting, when it happened and the previous value.',
  'Data is encrypted at rest with AES-256 and in transit with TLS 1.2 or later.',
  'To cancel a subscription, open the billing page and select the plan you want to end.',
  'Scheduled reports are delivered by email every Monday morning in the time zone of the workspace.',
  'A knowledge base can be connected to several experiences, each with its own greeting and theme.',
  'Error messages include a request identifier that support can use to find the matching logs.',
  'Guest users can read shared documents but cannot edit them or see the rest of the workspace.',
  'The command line tool reads JSON Lines files and splits them into jobs of a few hundred records.',
  'Our support team answers chat messages on weekdays between eight in the morning and six in the evening.',
  'Passwords must be at least twelve characters long and may not repeat one of the last five passwords.',
  "Product prices include value added tax where the law of the buyer's country requires it.",
  'The integration with the calendar creates an event for every booked appointment and updates it when it moves.',
  'Archived projects no longer count towards the limit of the plan and can be restored at any time.',
  'Backups are taken every night and kept for thirty days in a second region.',
];

const headings = ['Overview', 'Before you start', 'Steps', 'Limits', 'Troubleshooting', 'Billing', 'Security', 'Related settings'];

// The tests' deterministic generator (mulberry32), so every run uses the same texts.
export { random };

/** All of `items`, in an order drawn from `next` (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const result = [...items];
  for (let index = result.length - 1; index > 0; index--) {
    const swap = Math.floor(next() * (index + 1));
    [result[index], result[swap]] = [result[swap]!, result[index]!];
  }
  return result;
}

/** Paragraphs of whole sentences, cut at the last word boundary before `length` characters. */
export function texts(count: number, length: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    while (text.length < length) text += `${text ? ' ' : ''}${sentences[Math.floor(next() * sentences.length)]}`;
    return text.length > length ? text.slice(0, text.lastIndexOf(' ', length)) : text;
  });
}

/** Short questions: a sentence's first words, distinct by their sentence and length. */
export function questions(count: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, index) => {
    const words = sentences[Math.floor(next() * sentences.length)]!.split(' ');
    return `${words.slice(0, 5 + (index % 7)).join(' ')}?`;
  });
}

/** A Markdown document of about `size` characters: a title, sections with headings, paragraphs. */
export function markdownDocument(seed: number, size: number): { title: string; content: string } {
  const next = random(seed);
  const title = `Help article ${seed}: ${sentences[seed % sentences.length]!.split(' ').slice(0, 4).join(' ')}`;
  let content = `# ${title}\n\n`;
  while (content.length < size) {
    content += `## ${headings[Math.floor(next() * headings.length)]}\n\n`;
    // Sections of two or three paragraphs of three to six sentences: about 700 characters, as in
    // real help articles, so chunks come out near the 800-character target.
    const paragraphs = 2 + Math.floor(next() * 2);
    for (let paragraph = 0; paragraph < paragraphs && content.length < size; paragraph += 1) {
      const count = 3 + Math.floor(next() * 4);
      const words: string[] = [];
      for (let sentence = 0; sentence < count; sentence += 1) words.push(sentences[Math.floor(next() * sentences.length)]!);
      // A record number in the text keeps every document distinct, as real articles are.
      content += `${words.join(' ')} (Ref. ${seed}-${paragraph}.)\n\n`;
    }
  }
  return { title, content: content.trimEnd() };
}

export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? 0;
}

export const round = (value: number, digits = 1) => Number(value.toFixed(digits));
