import { randomBytes } from 'node:crypto';
import { alertFields, type AlertRule } from '../domain/alert-rule.js';
import type { Rate } from '../domain/rate.js';
import type { ZoneTime } from '../domain/time.js';

/** The event types a delivery carries. */
export type WebhookType = 'rate.alert' | 'rate.stale' | 'rate.recovered';

/**
 * Delivery bodies: `{"type", "timestamp", "data"}` as the Standard Webhooks
 * specification shapes them. Values are written as the source's number text
 * (already checked decimal text in every snapshot), so no digit is lost to a
 * float; everything else goes through JSON.stringify.
 */
const number = (text: string | null) => text ?? 'null';
const time = (zone: ZoneTime, ms: number | null) => (ms === null ? 'null' : JSON.stringify(zone.format(ms)));

function envelope(type: WebhookType, zone: ZoneTime, now: number, data: string): string {
  return `{"type":"${type}","timestamp":${time(zone, now)},"data":{${data}}}`;
}

/** A rule became true: the rule as given, the reference, its value and change then, and when that value was set. */
export function alertBody(rule: AlertRule, rate: Rate, zone: ZoneTime, now: number): string {
  return envelope('rate.alert', zone, now, alertFields(rule, rate, (ms) => zone.format(ms)));
}

/** A reference the account reads has been stale since `since`. */
export function staleBody(rate: Rate, since: number, zone: ZoneTime, now: number): string {
  return envelope(
    'rate.stale',
    zone,
    now,
    `"key":${JSON.stringify(rate.key)},"value":${number(rate.value)},"updated_at":${time(zone, rate.updated_at)},"stale_since":${time(zone, since)},"stale_seconds":${rate.stale_seconds ?? 'null'}`,
  );
}

/** A reference reported stale is fresh again. */
export function recoveredBody(rate: Rate, staleSince: number, zone: ZoneTime, now: number): string {
  return envelope(
    'rate.recovered',
    zone,
    now,
    `"key":${JSON.stringify(rate.key)},"value":${number(rate.value)},"updated_at":${time(zone, rate.updated_at)},"stale_since":${time(zone, staleSince)}`,
  );
}

/** A delivery's id, the `webhook-id` of each of its attempts: `msg_` and 128 random bits. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** An endpoint's id: `wh_` and 64 random bits. */
export function newEndpointId(): string {
  return `wh_${randomBytes(8).toString('hex')}`;
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
