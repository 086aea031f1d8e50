/** A failure the user caused: printed as one line, exit code 1, never a stack trace. */
export class UsageError extends Error {}

/** A setup the command cannot run with (a missing service it needs): one line, exit code 2. */
export class SetupError extends Error {}

export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    console.log('(none)');
    return;
  }
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(columns));
  for (const row of rows) console.log(line(columns.map((column) => cell(row[column]))));
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
