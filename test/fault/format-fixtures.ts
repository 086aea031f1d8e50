/**
 * Fixtures shared by the source-format tests: the ECB's daily reference-rate
 * XML as published, Persian digits, and the bundled catalogue with some
 * sanity bands opened upwards so an integer past 2^53 may be served. Made
 * here from the formats' public documentation; nothing is fetched.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../e2e/helpers.js';

const PERSIAN = '۰۱۲۳۴۵۶۷۸۹';

/** The text with its ASCII digits written as Persian digits. */
export const persian = (text: string) => text.replace(/\d/g, (d) => PERSIAN[Number(d)]!);

/** The ECB's daily reference-rate file (eurofxref-daily.xml), as published: currencies per euro, for one date. */
export function ecbXml(date: string, rates: Record<string, string>): string {
  return ecbDaysXml({ [date]: rates });
}

/** The same shape with several days, newest first as the ECB's history files list them. */
export function ecbDaysXml(days: Record<string, Record<string, string>>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
${Object.entries(days)
  .map(([time, rates]) => `\t\t<Cube time='${time}'>\n${Object.entries(rates).map(([currency, rate]) => `\t\t\t<Cube currency='${currency}' rate='${rate}'/>`).join('\n')}\n\t\t</Cube>`)
  .join('\n')}
\t</Cube>
</gesmes:Envelope>
`;
}

/** The bundled catalogue copied into `dir`, with the bands of `unbounded` (reference keys) opened upwards; returns `dir`. */
export function catalogueWithoutTops(dir: string, unbounded: readonly string[]): string {
  const source = join(ROOT, 'data', 'catalogue');
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(source).filter((name) => name.endsWith('.json'))) {
    if (file === 'popular.json') {
      copyFileSync(join(source, file), join(dir, file));
      continue;
    }
    const entries = JSON.parse(readFileSync(join(source, file), 'utf8')) as { key: string; max?: number }[];
    for (const entry of entries) if (unbounded.includes(entry.key)) delete entry.max;
    writeFileSync(join(dir, file), JSON.stringify(entries));
  }
  return dir;
}
