import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled when
 * its route first answers with that status rather than when the app starts.
 * Compiling every route's schemas took about a quarter of the CPU a server
 * spent before it listened (some 0.6 s of 2.4 s), for routes most processes
 * never answer with most of their statuses; a first answer now pays a few
 * milliseconds for its own.
 */
export function lazySerializers(): SerializerFactory {
  const standard = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = standard(externalSchemas, options);
    return (route) => {
      let serialize: ((document: unknown) => string) | null = null;
      return (document) => (serialize ??= compile(route))(document);
    };
  };
}
