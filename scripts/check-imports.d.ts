// Types of check-imports.js, for the test that imports it.
export const CHECKED: string[];
export const FLOORS: string[];
export function importGraph(root: string, dirs?: string[], tsConfig?: string): Promise<Record<string, string[]>>;
export type Problems = { circles: string[][]; featureLoops: { features: string[]; imports: string[] }[]; upward: string[] };
export function findProblems(modules: Record<string, string[]>): Problems;
export function describeProblems(problems: Problems): string[];
