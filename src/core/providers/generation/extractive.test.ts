import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ExtractiveAnswerGenerator } from './extractive.ts';
import type { GenerationRequest, GroundingSource } from './provider.ts';

const generator = new ExtractiveAnswerGenerator();
const source = (number: number, text: string): GroundingSource => ({ number, entryId: `e${number}`, title: `t${number}`, url: null, text, score: 1 });
const request = (question: string, sources: GroundingSource[], extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question,
  standaloneQuestion: question,
  history: [],
  sources,
  instructions: '',
  fallbackMessage: 'No answer.',
  ...extra,
});
async function answer(input: GenerationRequest): Promise<{ text: string; pieces: number }> {
  let text = '';
  let pieces = 0;
  for await (const piece of generator.generate(input)) {
    text += piece;
    pieces += 1;
  }
  return { text, pieces };
}

describe('extractive answers', () => {
  test('no sources: the fallback message, word for word', async () => {
    assert.deepEqual(await answer(request('What is the refund policy?', [])), { text: 'No answer.', pieces: 1 });
  });

  test('the sentences holding the question\'s rare terms, best source first, each followed by its citation', async () => {
    const sources = [
      source(1, '# Billing\n\nInvoices are sent monthly. Your account page lists every invoice.'),
      source(2, 'Refunds are paid back to the original card\nwithin 14 days. Contact us for anything else.'),
    ];
    const { text, pieces } = await answer(request('How long do refunds take?', sources));
    assert.equal(text, 'Refunds are paid back to the original card within 14 days. [2]');
    assert.equal(pieces, 1);
  });

  test('an FAQ question brings its answer; a sentence ending with a colon brings its code block', async () => {
    const faq = await answer(request('How do I reset my password?', [source(1, 'Q: How do I reset my password?\nA: Choose "Forgot password" on the sign-in page.')]));
    assert.equal(faq.text, 'A: Choose "Forgot password" on the sign-in page. [1]');
    const code = await answer(request('How do I build a 32 bit binary?', [source(1, 'You can build a 32 bit binary using:\n\n    % make 32bit\n\nThat is all.')]));
    assert.equal(code.text, 'You can build a 32 bit binary using:\n\n```\n% make 32bit\n```\n\n[1]');
  });

  test('a source found by meaning alone (no shared term) answers with its first sentences; a list stays a list, headings are not quoted', async () => {
    const { text } = await answer(request('Can I get my money back?', [source(1, '## Refunds\n\n- Refunds take 14 days.\n- They go to the original card.')]));
    assert.equal(text, '- Refunds take 14 days.\n- They go to the original card.\n\n[1]');
  });

  test('terms of the latest message weigh more than those the conversation added', async () => {
    const sources = [source(1, 'The Pro plan adds single sign-on.'), source(2, 'The Pro plan costs 20 euros per month.')];
    const { text } = await answer(request('and the price per month?', sources, { standaloneQuestion: 'What is the Pro plan? and the price per month?' }));
    assert.match(text, /^The Pro plan costs 20 euros per month\. \[2\]/);
  });

  test('an abbreviation does not end the quoted sentence; Markdown escapes of prose are undone', async () => {
    const { text } = await answer(request('How do I back up the database?', [source(1, 'Back up the database with a dump tool, e.g. Pg\\_dump, before every upgrade. Unrelated words follow here.')]));
    assert.equal(text, 'Back up the database with a dump tool, e.g. Pg_dump, before every upgrade. [1]');
  });

  test('the sentence stating what is asked (a number for "how many") outranks one repeating the question; its label comes with it', async () => {
    const docs = '##### work_mem (integer)\n\nSets the base maximum amount of memory used by a query operation.\n\nIf this value is specified without units, it is taken as kilobytes. The default value is four megabytes (4MB).';
    const { text } = await answer(request('What is the default value of work_mem?', [source(1, docs)], { standaloneQuestion: 'What is the default value of work_mem?' }));
    assert.match(text, /^work_mem \(integer\): .*The default value is four megabytes \(4MB\)\./s);
  });

  test('a digit inside a name is no number, "is omitted" states a default, and each cue met counts', async () => {
    const docs = [
      'The IMAP4 protocol version is determined at initialization.',
      'If port is omitted, the standard port (143) is used.',
    ].join(' ');
    const { text } = await answer(request('Which port does imaplib.IMAP4 connect to when I don\'t specify one?', [source(1, docs)]));
    assert.equal(text, 'If port is omitted, the standard port (143) is used. [1]');
  });

  test('a chunk that begins mid-section stands under the headings above it', async () => {
    const first = 'Between 1 and the number of days in the given month.';
    const second = 'Only -999999999 <= days <= 999999999 is allowed.';
    const text = `${first}\n\n${second}`;
    const sections = [
      { start: 0, headingPath: ['date.day'] },
      { start: first.length + 2, headingPath: ['class datetime.timedelta'] },
    ];
    const question = 'What is the largest number of days a timedelta can hold?';
    const { text: answered } = await answer(request(question, [{ ...source(1, text), sections }]));
    assert.match(answered, /Only -999999999 <= days <= 999999999 is allowed\./);
    // Without the headings, the sentence that repeats the question's words wins alone.
    const { text: unplaced } = await answer(request(question, [source(1, text)]));
    assert.equal(unplaced, `${first} [1]`);
  });

  test('a sentence two sources share is quoted once', async () => {
    const shared = 'Refunds are paid back to the original card within 14 days.';
    const { text } = await answer(request('How long do refunds take?', [source(1, shared), source(2, `${shared} Contact support otherwise.`)]));
    assert.equal(text.split(shared).length - 1, 1, text);
  });

  test('a follow-up prefers what the earlier answer did not say yet', async () => {
    const docs = 'Redis uses jemalloc by default on Linux. To select libc malloc instead, build with make MALLOC=libc.';
    const history = [
      { role: 'user' as const, content: 'Which allocator does Redis use?' },
      { role: 'assistant' as const, content: 'Redis uses jemalloc by default on Linux. [1]' },
    ];
    const { text } = await answer(
      request('And how can I select a different allocator?', [source(1, docs)], { history, standaloneQuestion: 'Which allocator does Redis use? And how can I select a different allocator?' }),
    );
    assert.match(text, /^To select libc malloc instead, build with make MALLOC=libc\./);
  });

  test('a table row answers with its header as context, and the sentence introducing a table brings its rows', async () => {
    const docs = [
      'The first character of the format string selects the byte order, according to the following table:',
      '',
      '| Character | Byte order |',
      '| --- | --- |',
      '| `@` | native |',
      '| `<` | little-endian |',
      '| `!` | network (= big-endian) |',
    ].join('\n');
    const { text } = await answer(request('Which byte order does the format character ! select?', [source(1, docs)]));
    assert.match(text, /according to the following table:\n\n- `@` — native\n- `<` — little-endian\n- `!` — network \(= big-endian\)\n\n\[1\]$/);
  });
  test('every name of an option stays in its label: consecutive definition terms are one label', async () => {
    const docs = [
      '#### -u',
      '',
      '#### --include-untracked',
      '',
      '#### --no-include-untracked',
      '',
      'When used with the push and save commands, all untracked files are also stashed and then cleaned up.',
      '',
      '#### -a, --all',
      '',
      'All ignored and untracked files are also stashed and then cleaned up.',
    ].join('\n');
    const { text } = await answer(request('How do I stash untracked files too?', [source(1, docs)]));
    assert.match(text, /^-u, --include-untracked, --no-include-untracked: When used with the push and save commands, all untracked files are also stashed/);
    // Long names (several signatures of one class) are not joined: the first one names it.
    const signatures = ['##### class fractions.Fraction(numerator=0, denominator=1)', '', '##### class fractions.Fraction(other_fraction)', '', '##### class fractions.Fraction(float)', '', 'The first version requires that numerator and denominator are instances of numbers.Rational.'].join('\n');
    const { text: fraction } = await answer(request('What does the first version of Fraction require?', [source(1, signatures)]));
    assert.match(fraction, /^class fractions\.Fraction\(numerator=0, denominator=1\): The first version requires/);
  });
});
