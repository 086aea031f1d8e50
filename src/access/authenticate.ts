import type { Service } from '../domain/plan.js';
import { ApiError } from '../http/errors.js';
import type { AccessDirectory, KeyAccess } from './directory.js';
import { hashKey, KEY_FORMAT } from './key-material.js';

/**
 * The key check of every authenticated request: present (401 API_KEY_MISSING),
 * known, live and unexpired (401 API_KEY_INVALID), account active and the
 * service in its plan (403 SERVICE_NOT_ACTIVE). Pure lookups in memory.
 */
export function authenticate(directory: AccessDirectory, header: string | string[] | undefined, service: Service, now: number): KeyAccess {
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') throw new ApiError('API_KEY_MISSING');
  const trimmed = key.trim();
  if (!KEY_FORMAT.test(trimmed)) throw new ApiError('API_KEY_INVALID');
  const access = directory.lookup(hashKey(trimmed));
  if (!access || (access.expiresAt !== null && access.expiresAt <= now)) throw new ApiError('API_KEY_INVALID');
  if (!access.account.active) throw new ApiError('SERVICE_NOT_ACTIVE', 'This account is suspended.');
  if (!access.account.services.has(service)) throw new ApiError('SERVICE_NOT_ACTIVE', `The ${service} service is not included in the ${access.account.plan.name} plan.`);
  return access;
}
