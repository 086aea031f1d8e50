import { CatalogueError } from '../catalogue/load.js';
import { ConfigError } from '../config.js';
import { ListenError } from '../runtime/listen-error.js';
import { describeStoreError, StoreUnavailableError } from '../store/store-errors.js';

export { describeStoreError };

/** A failure of the setup (config, catalogue, database, port) rather than a bug: one line for the operator, exit code 2. */
export function isOperatorError(error: unknown): boolean {
  return error instanceof ConfigError || error instanceof CatalogueError || error instanceof StoreUnavailableError || error instanceof ListenError;
}
