/**
 * CLINC150 (Larson et al., 2019, "An Evaluation Dataset for Intent Classification and
 * Out-of-Scope Prediction", CC BY 3.0): 150 intents of a task-oriented assistant, each with
 * crowd-written utterances, and utterances that fall in none of them. Read where it lies, never
 * copied into the repository.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export const CLINC_SOURCE = 'CLINC150 (github.com/clinc/oos-eval, Larson et al. 2019), CC BY 3.0';

const SPLITS = ['train', 'val', 'test', 'oos_val', 'oos_test'] as const;
type SplitName = (typeof SPLITS)[number];

/** An utterance and the intent it was written for (`oos` for the out-of-scope ones). */
export type Utterance = { text: string; intent: string };
export type Clinc = Record<SplitName, Utterance[]>;

/** The file `--clinc-file` or CLINC150_FILE names, or an error saying how to get it. */
export function clincFile(file: string | undefined): string {
  const chosen = file ?? process.env.CLINC150_FILE;
  if (chosen === undefined || !existsSync(chosen)) {
    throw new Error(
      `${chosen === undefined ? 'No CLINC150 file given' : `${chosen} not found`}: ` +
        'git clone https://github.com/clinc/oos-eval, then pass --clinc-file <the clone>/data/data_full.json (or set CLINC150_FILE; data_small.json works too).',
    );
  }
  return chosen;
}

/** The splits a CLINC150 file holds (each a list of `[text, intent]`), checked. */
export async function readClinc(file: string): Promise<Clinc> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  const entries = SPLITS.map((split) => {
    const rows = parsed[split];
    const valid = Array.isArray(rows) && rows.every((row) => Array.isArray(row) && row.length === 2 && row.every((field) => typeof field === 'string'));
    if (!valid) throw new Error(`${file}: "${split}" is not a list of [text, intent].`);
    return [split, (rows as [string, string][]).map(([text, intent]) => ({ text, intent }))] as const;
  });
  return Object.fromEntries(entries) as Clinc;
}
