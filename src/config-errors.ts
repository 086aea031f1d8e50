import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

/** What is wrong with a value and where: `path` in TypeBox's form (`/sources/0/type`). */
export interface SchemaProblem {
  path: string;
  message: string;
}

/**
 * The first problem of `value` against `schema`, in words an operator can act
 * on, or null when the value fits. TypeBox says only "Expected union value"
 * for a union; here a union of literals lists its choices (`"htp" is not one
 * of: file, http`), a union of objects told apart by a literal field (a
 * discriminator) is judged by the variant that field names, or by that
 * field's choices when it names none, and any other union lists what each of
 * its variants expects.
 */
export function firstProblem(schema: TSchema, value: unknown): SchemaProblem | null {
  const first = Value.Errors(schema, value).First();
  return first ? explain(first) : null;
}

function explain(error: ValueError): SchemaProblem {
  const variants = (error.schema?.anyOf ?? []) as TSchema[];
  const choice = variants.length > 0 && variants.every(isLiteral);
  // A missing field that is a choice: say what it may be.
  if (error.type === ValueErrorType.ObjectRequiredProperty && choice) return { path: error.path, message: notOneOf(undefined, variants) };
  if (error.type !== ValueErrorType.Union) return { path: error.path, message: error.message };
  if (choice) return { path: error.path, message: notOneOf(error.value, variants) };
  const discriminator = discriminatorOf(variants);
  if (discriminator !== null) {
    const tags = variants.map((variant) => variant.properties[discriminator] as TSchema);
    if (!isRecord(error.value)) return { path: error.path, message: `${shown(error.value)} is not valid: expected an object whose "${discriminator}" is one of: ${choicesOf(tags)}` };
    const tag = error.value[discriminator];
    const chosen = variants.find((variant) => literalOf(variant.properties[discriminator]) === tag);
    if (!chosen) return { path: `${error.path}/${discriminator}`, message: notOneOf(tag, tags) };
    const inner = firstProblem(chosen, error.value);
    if (inner) return { path: `${error.path}${inner.path}`, message: inner.message };
  }
  const expected = variants.map((variant, i) => (isLiteral(variant) ? JSON.stringify(literalOf(variant)) : variant.type === 'null' ? 'null' : lowerFirst(error.errors[i]?.First()?.message.replace(/^Expected /, '') ?? 'another value')));
  return { path: error.path, message: `${shown(error.value)} is not valid: expected ${expected.join(', or ')}` };
}

/** `"htp" is not one of: file, http`, or for a missing field `required, one of: file, http`. */
function notOneOf(value: unknown, literals: TSchema[]): string {
  return `${value === undefined ? 'required,' : `${shown(value)} is not`} one of: ${choicesOf(literals)}`;
}

/** `file, http`: strings unquoted, as the docs write them. */
function choicesOf(literals: TSchema[]): string {
  return literals
    .map((literal) => {
      const choice = literalOf(literal);
      return typeof choice === 'string' ? choice : JSON.stringify(choice);
    })
    .join(', ');
}

/** A field every variant has as a literal, with a different literal in each: what tells them apart. */
function discriminatorOf(variants: TSchema[]): string | null {
  if (variants.length < 2 || !variants.every((variant) => variant.type === 'object' && isRecord(variant.properties))) return null;
  const candidates = Object.keys(variants[0]!.properties as object);
  return (
    candidates.find((name) => {
      const tags = variants.map((variant) => variant.properties[name] as TSchema | undefined);
      return tags.every((tag) => tag !== undefined && isLiteral(tag)) && new Set(tags.map((tag) => literalOf(tag!))).size === variants.length;
    }) ?? null
  );
}

function isLiteral(schema: TSchema): boolean {
  return schema !== null && typeof schema === 'object' && 'const' in schema;
}

function literalOf(schema: TSchema | undefined): unknown {
  return schema && isLiteral(schema) ? schema.const : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The offending value, short: a config file may hold anything there. */
function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
