import { Type } from '@sinclair/typebox';
import { CATEGORIES } from '../../../domain/reference.js';
import { Ok, Per, Currency } from '../../schemas.js';

export const ReferenceSchema = Type.Object(
  {
    key: Type.String(),
    title: Type.String({ description: 'Persian title' }),
    title_en: Type.String(),
    description: Type.String(),
    unit: Type.String({ description: 'Persian label saying currency and per in words, e.g. ریال/گرم, دلار/اونس, ریال/۱۰۰ ین' }),
    currency: Currency(),
    per: Per,
    category: Type.Union(CATEGORIES.map((c) => Type.Literal(c))),
    source_key: Type.String(),
    aliases: Type.String({ description: 'Comma-separated alternative keys, "" when none' }),
    status: Type.Literal('active'),
    in_plan: Type.Boolean({ description: "Whether the reference is inside the calling key's allowance (its account's selection or its plan's defaults)" }),
  },
  { $id: 'Reference', additionalProperties: false },
);

export const CatalogueResponse = Type.Object(
  { ...Ok, count: Type.Integer(), references: Type.Array(Type.Ref(ReferenceSchema)) },
  { $id: 'CatalogueResponse', additionalProperties: false },
);
