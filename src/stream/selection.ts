import type { KeyAccess } from '../access/directory.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { AlertRuleError, parseAlertList, type AlertRule } from '../domain/alert-rule.js';
import { ApiError } from '../domain/errors.js';
import { KEY_PATTERN } from '../domain/reference.js';

/** Keys one stream may ask for. */
export const MAX_STREAM_KEYS = 100;

/** The references a stream follows, in order, and what streams sharing its frames have in common (see Selection.tag). */
export interface AllowedKeys {
  list: string[];
  tag: object | string;
}

/**
 * `?keys=` as canonical reference keys, in request order, each once; null
 * without the parameter (the whole allowance). Throws for a malformed key,
 * too many keys, or none that resolves. Kept by an open stream, so its
 * allowance can be applied again when the account's plan changes.
 */
export function requestedKeys(catalogue: Catalogue, param: string | undefined): string[] | null {
  if (param === undefined) return null;
  const names = new Set<string>();
  for (const part of param.split(',')) {
    const name = part.trim();
    if (!KEY_PATTERN.test(name)) {
      throw new ApiError('INVALID_PARAMETER', `Parameter "keys": ${name === '' ? 'holds an empty key' : `invalid key ${JSON.stringify(name.slice(0, 80))}`}; keys are 1-64 letters, digits, "_", "." or "-".`);
    }
    names.add(name.toLowerCase());
  }
  if (names.size > MAX_STREAM_KEYS) throw new ApiError('RATE_KEYS_LIMIT_EXCEEDED', `${names.size} distinct keys requested; a stream takes at most ${MAX_STREAM_KEYS}.`);
  const keys = new Set<string>();
  for (const name of names) {
    const reference = catalogue.lookup(name);
    if (reference) keys.add(reference.key);
  }
  if (keys.size === 0) throw new ApiError('RATE_NOT_FOUND');
  return [...keys];
}

/** The names of `?keys=` a stream leaves out, as the detail endpoint's `meta` lists them. */
export interface DroppedKeys {
  /** Names matching no reference (a mistyped key). */
  unknown: string[];
  /** Names of references outside the caller's allowance. */
  denied: string[];
}

/**
 * Which names of `?keys=` (already read by requestedKeys) the stream leaves
 * out under `access`, trimmed and in lower case; null
 * when none is (or without the parameter), so a stream that drops nothing
 * sends nothing more.
 */
export function droppedKeys(catalogue: Catalogue, param: string | undefined, access: KeyAccess): DroppedKeys | null {
  if (param === undefined) return null;
  const allowance = access.account.allowance;
  const dropped: DroppedKeys = { unknown: [], denied: [] };
  // Each name once, and a reference outside the allowance once under the first name that asked for it (as detail lists them).
  const seen = new Set<string>();
  for (const part of param.split(',')) {
    const name = part.trim().toLowerCase();
    const reference = catalogue.lookup(name);
    const id = reference ? reference.key : name;
    if (seen.has(id)) continue;
    seen.add(id);
    if (!reference) dropped.unknown.push(name);
    else if (allowance !== null && !allowance.has(reference.key)) dropped.denied.push(name);
  }
  return dropped.unknown.length + dropped.denied.length === 0 ? null : dropped;
}

/**
 * What a stream with this request may follow under `access`: the requested
 * keys its allowance covers, or the whole allowance. Throws
 * REFERENCE_NOT_IN_PLAN when none of the requested keys is allowed.
 */
export function allowedKeys(catalogue: Catalogue, requested: readonly string[] | null, access: KeyAccess): AllowedKeys {
  const allowance = access.account.allowance;
  if (requested === null) {
    const list = allowance === null ? catalogue.references.map((reference) => reference.key) : [...allowance];
    return { list, tag: allowance ?? catalogue };
  }
  const list = allowance === null ? [...requested] : requested.filter((key) => allowance.has(key));
  if (list.length === 0) throw new ApiError('REFERENCE_NOT_IN_PLAN');
  return { list, tag: list.join(',') };
}

/**
 * Whether a stream following `current` (under an earlier entry of its key)
 * follows exactly what `access` allows now: checked for every open stream at
 * each directory reload, so it compares in place rather than building the
 * new selection.
 */
export function keepsKeys(catalogue: Catalogue, current: { keys: readonly string[]; tag: object | string }, requested: readonly string[] | null, access: KeyAccess): boolean {
  const allowance = access.account.allowance;
  // A whole-allowance stream is tagged with its allowance, which a reload that changed nothing hands over as the same object.
  if (requested === null) return current.tag === (allowance ?? catalogue);
  let index = 0;
  for (const key of requested) {
    if (allowance !== null && !allowance.has(key)) continue;
    if (current.keys[index++] !== key) return false;
  }
  return index === current.keys.length;
}

/**
 * `?alerts=` as rules (docs/api.md#stream-alerts): each parsed with the
 * shared grammar, resolved like `?keys=` (a key or alias, any case), and held
 * to what the stream follows, its allowance and its `keys`. Throws
 * INVALID_PARAMETER naming the first rule that cannot be used.
 */
export function alertRules(catalogue: Catalogue, param: string, keys: AllowedKeys, access: KeyAccess): AlertRule[] {
  const allowance = access.account.allowance;
  const follows = new Set(keys.list);
  try {
    const rules = parseAlertList(param, (name) => catalogue.lookup(name)?.key);
    for (const rule of rules) {
      if (follows.has(rule.key)) continue;
      const why = allowance !== null && !allowance.has(rule.key) ? 'among the references your plan allows' : 'among the keys this stream follows (add it to "keys")';
      throw new AlertRuleError(rule.text, `reference "${rule.key}" is not ${why}`);
    }
    return rules;
  } catch (error) {
    if (error instanceof AlertRuleError) throw new ApiError('INVALID_PARAMETER', `Parameter "alerts": ${error.message}.`);
    throw error;
  }
}
