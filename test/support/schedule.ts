/**
 * Which test files run, in what order, and how much of the machine each takes.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files that keep the CPU busy (several servers, a browser, load): they count for more than one file. */
const WEIGHTS: Record<string, number> = {};

/** Files that take longest start first, so the run does not end waiting on one of them alone. */
const FIRST: string[] = [];

export function testFiles(root: string): string[] {
  return (readdirSync(join(root, 'test'), { recursive: true }) as string[])
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => join('test', path))
    .sort();
}

export function weightOf(file: string): number {
  return WEIGHTS[file] ?? 1;
}

export function orderFiles(files: string[]): string[] {
  const rank = (file: string): number => {
    const index = FIRST.indexOf(file);
    return index === -1 ? FIRST.length : index;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
