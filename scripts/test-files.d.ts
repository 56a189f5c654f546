// Types of test-files.js, for the tests that import it.
export function testFiles(dirs: string[]): string[];
export function drivesBrowser(file: string): boolean;
export function startsLoreProcesses(file: string): boolean;
export function engineBlind(file: string): boolean;
export function longestFirst(files: string[]): string[];
export function marksOneEngine(file: string): boolean;
export function guardedEngine(file: string): 'pglite' | 'postgres' | undefined;
