/**
 * The store cannot be used right now: the database refuses or drops
 * connections, is locked, full, or its file is gone. The message is one line
 * fit for an operator (the URL without its password), never a stack.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly reason: string,
    where: string,
  ) {
    super(`cannot use the database ${where}: ${reason}`);
  }
}

/** What went wrong with the database, in a few words: the same text for logs, the CLI and the status page. */
export function describeStoreError(error: unknown): string {
  const err = firstCause(error) as NodeJS.ErrnoException & { code?: string };
  switch (err?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case '57P01':
    case '57P02':
    case '57P03':
      return 'connection terminated by the server';
    case '3D000':
      return 'database does not exist';
    case '28P01':
    case '28000':
      return 'authentication failed';
    case '53300':
      return 'too many connections';
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return 'database is locked';
    case 'SQLITE_FULL':
      return 'disk or database is full';
    case 'SQLITE_READONLY':
      return 'database is read-only';
    case 'SQLITE_CANTOPEN':
      return 'database file cannot be opened';
    case 'SQLITE_IOERR':
      return 'disk I/O error';
    default:
      break;
  }
  const message = typeof err?.message === 'string' && err.message !== '' ? err.message : 'unknown database error';
  if (/timeout/i.test(message)) return 'connection timed out';
  if (/terminat|Connection ended|closed/i.test(message)) return 'connection lost';
  // No paths, no SQL: keep the first line, short.
  return message.split('\n')[0]!.replace(/\/[^\s'"]+/g, '<path>').slice(0, 160);
}

/** A URL as an operator may see it: never the password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable database URL)';
  }
}

/** `connect` to a host with several addresses fails with an AggregateError whose message is empty. */
function firstCause(error: unknown): unknown {
  if (error instanceof AggregateError && error.errors.length > 0) return firstCause(error.errors[0]);
  return error;
}

/** A store error met in a worker thread, as it crosses back to the event loop (message and driver code). */
export interface CarriedStoreError {
  storeError: { message: string; code?: string };
}

/** Carry a store error out of a worker thread (an Error's own fields do not all survive the crossing). */
export function carryStoreError(error: unknown): CarriedStoreError {
  const code = (error as { code?: unknown } | null)?.code;
  return { storeError: { message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) } };
}

/** The store error again, on the event loop, for the store's health to judge. */
export function storeErrorOf(carried: CarriedStoreError): Error {
  return Object.assign(new Error(carried.storeError.message), carried.storeError.code ? { code: carried.storeError.code } : {});
}

export function isCarriedStoreError(value: unknown): value is CarriedStoreError {
  return typeof value === 'object' && value !== null && 'storeError' in value;
}
