/**
 * A `node --test` reporter (plain JavaScript: reporters load before `--import
 * tsx` applies) that writes one JSON line at the end: the suites and tests
 * skipped for want of a service, and the other skips. Node's own summary
 * counts neither a skipped suite nor the tests inside it, so without this a
 * skipped service would not show at all. A service skip is known by its
 * reason, which always names the opt-out (test/support/services.ts).
 */
const SERVICE_SKIP = 'NERKH_TEST_SKIP_SERVICES=1';

export default async function* skipReporter(source) {
  const counts = { serviceSuites: [], serviceTests: 0, otherSkips: 0 };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, details, name } = event.data;
    if (!skip) continue;
    if (typeof skip !== 'string' || !skip.includes(SERVICE_SKIP)) counts.otherSkips++;
    else if (details?.type === 'suite') counts.serviceSuites.push(name);
    else counts.serviceTests++;
  }
  yield `${JSON.stringify(counts)}\n`;
}
