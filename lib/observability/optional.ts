import type { MiddlewareObj } from '@middy/core';
import { logger } from '../log';

/**
 * A Powertools module (./emf.ts, ./xray.ts) that is loaded only where it is switched on, once,
 * starting when the module that asks for it is evaluated (in Lambda: during init, before the first
 * invocation). Where it is off, or fails to load, it is undefined and nothing of it is evaluated.
 */
export interface OptionalModule<M> {
  /** The module once loaded; undefined while loading, when off, or when it failed to load. */
  current(): M | undefined;
  /** Waits for the load (immediate when off). */
  ready(): Promise<M | undefined>;
}

export function optionalModule<M>(what: string, enabled: () => boolean, load: () => Promise<M>): OptionalModule<M> {
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
  void ready();
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
