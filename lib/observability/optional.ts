import type { MiddlewareObj } from '@middy/core';
import { logger } from '../log';

/**
 * A Powertools module (./emf.ts, ./xray.ts) that is loaded only where it is switched on, once.
 * `atInit` (metrics): loading starts when the module that asks for it is evaluated (in Lambda:
 * during init, before the first invocation). Otherwise (tracing) it starts on the first `ready()`.
 * Where it is off, or fails to load, it is undefined and nothing of it is evaluated.
 */
export interface OptionalModule<M> {
  /** The module once loaded; undefined while loading, when off, or when it failed to load. */
  current(): M | undefined;
  /** Starts the load if it has not started, and waits for it (immediate when off). */
  ready(): Promise<M | undefined>;
}

/**
 * What init started loading in the background, on `globalThis` under this symbol: `npm run size`'s
 * runner (infra/bundle-report.ts) waits for it, so a cold start is measured with what it loads.
 */
export const INIT_LOADS = Symbol.for('case-evidence.initLoads');

export function optionalModule<M>(
  what: string,
  enabled: () => boolean,
  load: () => Promise<M>,
  { atInit = true }: { atInit?: boolean } = {},
): OptionalModule<M> {
  let current: M | undefined;
  let loading: Promise<M | undefined> | undefined;
  const ready = () => {
    loading ??= enabled()
      ? load().then(
          (loaded) => (current = loaded),
          (error) => {
            logger.error(`${what} not available`, { error });
            return undefined;
          },
        )
      : Promise.resolve(undefined);
    return loading;
  };
  if (atInit) {
    const started = ready();
    const registry = globalThis as { [INIT_LOADS]?: Promise<unknown>[] };
    registry[INIT_LOADS] ??= [];
    registry[INIT_LOADS].push(started);
  }
  return { current: () => current, ready };
}

/** middy middleware that hands each phase to the module's own middleware once loaded; nothing when it is off. */
export function delegatingMiddleware<M, E, R, C>(
  name: string,
  module: OptionalModule<M>,
  middlewareOf: (loaded: M) => MiddlewareObj,
): MiddlewareObj<E, R, Error, C> {
  let inner: MiddlewareObj | undefined;
  return {
    name,
    before: async (request) => {
      const loaded = await module.ready();
      if (!loaded) return;
      inner ??= middlewareOf(loaded);
      await inner.before?.(request as never);
    },
    after: async (request) => {
      await inner?.after?.(request as never);
    },
    onError: async (request) => {
      await inner?.onError?.(request as never);
    },
  };
}
