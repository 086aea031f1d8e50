export const CATEGORIES = ['gold', 'coin', 'currency', 'precious_metal', 'industrial_metal', 'energy', 'crypto'] as const;
export type Category = (typeof CATEGORIES)[number];

/** The pattern every reference key and alias follows (PRODUCT §2, INVALID_KEYS). */
export const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** One entry of the catalogue: what a number means, never the number itself. */
export interface Reference {
  key: string;
  title: string;
  title_en: string;
  description: string;
  unit: string;
  category: Category;
  source_key: string;
  aliases: string[];
  status: 'active';
  /**
   * The sanity band of the reference's price (inclusive), in its own unit; null where open.
   * A value outside it is absurd for this reference (a gold coin at 0.3 rial, 1e300) and is never served.
   */
  min: number | null;
  max: number | null;
}
