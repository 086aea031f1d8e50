import { ApiError } from '../domain/errors.js';

/** A query parameter the endpoint does not take: named, so a typo never passes silently (PRODUCT §7). */
export function unknownParameter(name: string, accepted: readonly string[]): ApiError {
  const takes = accepted.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${accepted.join(', ')}`;
  return new ApiError('INVALID_PARAMETER', `Unknown query parameter ${JSON.stringify(name.slice(0, 64))}; ${takes}.`);
}

/** A parameter whose value is not one of a fixed set: the error lists the set. */
export function notOneOf(name: string, allowed: readonly unknown[]): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be one of: ${allowed.join(', ')}.`);
}
