/**
 * What the tests of streams held to their key's access share: the plans
 * (one that streams everything, one with two references, one whose streams
 * live two seconds; the default `basic` has no streams), the source they
 * read, and waits that say when an event came.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { EventSourceMessage } from 'eventsource-parser';
import type { Store } from '../../src/store/store.js';
import { get, pollUntil } from '../e2e/helpers.js';
import { eventually, writeSource } from '../support/env.js';
import { SAMPLE, SAMPLE_VALUES } from '../support/harness.js';
import { openStream, ratesOf, type SseStream } from './sse-client.js';

/** The documented bound: a withdrawn access ends (or narrows) a stream within 2 s. */
export const WITHIN_MS = 2000;

/** A stream's lifetime under the `brief` plan. */
export const BRIEF_SECONDS = 2;

const streaming = { services: ['catalogue', 'detail', 'usage', 'stream'], refresh_interval_seconds: 0, requests_per_minute: 1_000_000, requests_per_day: null, max_streams: 20 };

export const PLANS = {
  wide: { ...streaming, max_references: null },
  narrow: { ...streaming, max_references: 2, default_references: ['usd_free', 'eur_free'] },
  brief: { ...streaming, max_references: null, max_stream_seconds: BRIEF_SECONDS },
  alerting: { ...streaming, services: [...streaming.services, 'alerts'], max_references: null },
};

/** A config file with one file source at `sourcePath` and PLANS. */
export function writeConfig(configPath: string, sourcePath: string): void {
  writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 300, poll_seconds: 0.2 }], plans: PLANS }));
}

/** Every sample reference at its level plus `step`. */
export function writeValues(sourcePath: string, step: number): void {
  writeSource(sourcePath, Object.fromEntries(Object.entries(SAMPLE).map(([key, sourceKey]) => [sourceKey, SAMPLE_VALUES[key as keyof typeof SAMPLE] + step])));
}

/** The first event after index `from` that `matches`, and when it was seen (epoch ms, within 10 ms). */
export async function untilEvent(stream: SseStream, matches: (event: EventSourceMessage) => boolean, from = 0, timeoutMs = 5000): Promise<{ event: EventSourceMessage; at: number }> {
  const event = await eventually(() => stream.events.slice(from).find(matches), timeoutMs, 10);
  return { event: event!, at: Date.now() };
}

/** The error envelope an `error` event carries. */
export function envelopeOf(event: EventSourceMessage | undefined): { success: boolean; error: string; message: string; request_id: string } {
  if (event?.event !== 'error') throw new Error(`expected an error event, got ${JSON.stringify(event)}`);
  return JSON.parse(event.data) as { success: boolean; error: string; message: string; request_id: string };
}

export const keysOf = (event: EventSourceMessage) => ratesOf(event).rates.map((rate) => rate.key);

/** A stream opened with `key` on the server at `base`, admitted (200) and past its first event; kept in `streams` for closing. */
export async function openAdmitted(base: string, key: string, query: string, streams: SseStream[], headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await openStream(base, `/v1/stream${query}`, { 'x-api-key': key, ...headers });
  streams.push(stream);
  assert.equal(stream.status, 200, stream.body);
  await stream.event(0);
  return stream;
}

/** An account on `plan` and a key for it, made in the store and waited for until every server in `bases` accepts it. */
export async function issueWorkingKey(store: Store, bases: string[], username: string, plan: string, expiresAt: number | null = null): Promise<{ id: string; key: string }> {
  const account = await store.accounts.create(username, plan);
  const issued = await store.keys.issue(account.id, { expiresAt });
  await pollUntil(
    () => Promise.all(bases.map((base) => get(base, '/v1/rates/usd_free', issued.key))),
    (all) => all.every((response) => response.status === 200),
    3000,
    50,
    (all) => all.map((response) => response.status).join(),
  );
  return issued;
}
