import type { Service } from '../domain/plan.js';
import { ApiError } from '../domain/errors.js';
import type { AccessDirectory, KeyAccess } from './directory.js';
import { KEY_FORMAT } from '../domain/key-material.js';

/**
 * Which key is this: present (401 API_KEY_MISSING), well-formed, known,
 * not revoked and not expired (401 API_KEY_INVALID). Pure in-memory lookups.
 */
export function identify(directory: AccessDirectory, header: string | string[] | undefined, now: number): KeyAccess {
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') throw new ApiError('API_KEY_MISSING');
  const trimmed = key.trim();
  // A key that matched before was well-formed then: the format is checked on the way to hashing a new one.
  let access = directory.knownKey(trimmed);
  if (access === undefined) {
    if (!KEY_FORMAT.test(trimmed)) throw new ApiError('API_KEY_INVALID');
    access = directory.lookupKey(trimmed);
  }
  return checkKeyLive(access, now);
}

/** A key found and not expired, else 401 API_KEY_INVALID (a revoked key is no longer found). */
export function checkKeyLive(access: KeyAccess | undefined | null, now: number): KeyAccess {
  if (!access || (access.expiresAt !== null && access.expiresAt <= now)) throw new ApiError('API_KEY_INVALID');
  return access;
}

/** May this key's account use this service: active account, service in its plan (else 403 SERVICE_NOT_ACTIVE). */
export function checkService(access: KeyAccess, service: Service): void {
  if (!access.account.active) throw new ApiError('SERVICE_NOT_ACTIVE', 'This account is suspended.');
  if (!access.account.services.has(service)) throw new ApiError('SERVICE_NOT_ACTIVE', `The ${service} service is not included in the ${access.account.plan.name} plan.`);
}

/** A browser request from an origin outside the account's allow-list (403 ORIGIN_NOT_ALLOWED). */
export function checkOrigin(access: KeyAccess, origin: string | undefined): void {
  if (origin !== undefined && access.account.origins !== null && !access.account.origins.has(origin)) {
    throw new ApiError('ORIGIN_NOT_ALLOWED', `Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed for this key.`);
  }
}
