// Source defaults the config names, apart from the readers that use them, so reading the config loads no parser.

/** The default cap on a source document's decoded size (`max_bytes`). */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

/** The default longest wait between polls of a failing source: a recovered source is used again within this. */
export const DEFAULT_MAX_BACKOFF_SECONDS = 30;
