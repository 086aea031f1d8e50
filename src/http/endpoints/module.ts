import type { TSchema } from '@sinclair/typebox';
import type { AppDeps } from '../deps.js';
import type { KeyedEndpoint } from '../pipeline/endpoint.js';

type Hook = () => void | Promise<void>;

/**
 * What an endpoint's folder gets once, as the app is built: the app's
 * dependencies, the parts it shares with other endpoints (or the app), and
 * hooks into the app's shutdown. Everything an endpoint prepares per snapshot
 * (its renderer) or wires at start (metrics, worker threads) it makes here,
 * so neither AppDeps nor app.ts changes for it.
 */
export interface EndpointContext {
  readonly deps: AppDeps;
  /** One value per app, made by `make` the first time anyone asks for it (the streams, the usage reads, …). */
  shared<T>(make: (context: EndpointContext) => T): T;
  /** Run as the app starts closing, before it waits for connections (what would hold a drain open). */
  preClose(hook: Hook): void;
  /** Run once the app has closed. */
  onClose(hook: Hook): void;
  /** Set on the app instance (`app[name]`), for tests that reach inside an endpoint. */
  expose(name: string, value: unknown): void;
}

/**
 * An endpoint's folder, as the registry (registry.ts) lists it: the
 * descriptors it serves, the response schemas the document names, and how
 * a test calls each of its paths.
 */
export interface EndpointModule {
  /** Its descriptors (built with keyedEndpoint), made once per app; the answer functions close over what they need. */
  build(context: EndpointContext): KeyedEndpoint | readonly KeyedEndpoint[];
  /** The schemas with an `$id` its answers refer to, registered with the app so the document names them. */
  schemas?: readonly TSchema[];
  /** Each path it registers (as Fastify writes it) → a URL that answers 200 for `username`'s enterprise key: the security suite calls every one. */
  examples: Readonly<Record<string, (username: string) => string>>;
}

/** Typed at the definition; the registry lists them. */
export function endpointModule(module: EndpointModule): EndpointModule {
  return module;
}

/** A fresh context for one app; `hooks` are what the app registers when it is up. */
export function endpointContext(deps: AppDeps): { context: EndpointContext; preClose: Hook[]; onClose: Hook[]; exposed: [string, unknown][] } {
  const made = new Map<(context: EndpointContext) => unknown, unknown>();
  const preClose: Hook[] = [];
  const onClose: Hook[] = [];
  const exposed: [string, unknown][] = [];
  const context: EndpointContext = {
    deps,
    shared<T>(make: (context: EndpointContext) => T): T {
      if (!made.has(make)) made.set(make, make(context));
      return made.get(make) as T;
    },
    preClose: (hook) => void preClose.push(hook),
    onClose: (hook) => void onClose.push(hook),
    expose: (name, value) => void exposed.push([name, value]),
  };
  return { context, preClose, onClose, exposed };
}
