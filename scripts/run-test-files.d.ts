// Types of run-test-files.js, for the test that imports it.
/** One test file to run: on which engine (a label), with what environment, in which lane. */
export type Job = { file: string; engine: string; env: Record<string, string>; lane: string };
export type Result = { ok: boolean; seconds: number; job: Job };
export function runTestFiles(plan: { jobs: Job[]; lanes: Record<string, number>; write?: (text: string) => void }): Promise<Result[]>;
