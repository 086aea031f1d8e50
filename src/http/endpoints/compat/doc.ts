/** The tag every compatibility route is listed under in the API document. */
export const COMPAT_DOC: { tags: string[] } = { tags: ['compatibility'] };
