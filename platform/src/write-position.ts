// Read your writes: while a request/reply handler runs, the event store notes the highest log
// position it appended, and the bus sends it back with the reply as `written`, so the gateway can
// wait until its read models have applied that position before it answers the client.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Written {
  source: string;
  position: number;
}

const scope = new AsyncLocalStorage<{ position: number }>();

/** Called by the event store for every append made inside a tracked handler. */
export function notePosition(position: number): void {
  const s = scope.getStore();
  if (s && position > s.position) s.position = position;
}

/**
 * Runs `fn` apart from the request it is called in, and says the highest position it appended: work
 * done for several requests at once (a batch of writes) that each request then notes as its own.
 */
export async function capturingPosition<T>(fn: () => Promise<T>): Promise<{ value: T; position: number }> {
  const s = { position: 0 };
  const value = await scope.run(s, fn);
  return { value, position: s.position };
}

/**
 * Runs a request handler and, when it appended events and answered with a result object, adds
 * `written: {source, position}` to that answer.
 */
export async function withWritePosition(source: string, fn: () => Promise<unknown>): Promise<unknown> {
  const s = { position: 0 };
  const result = await scope.run(s, fn);
  if (s.position > 0 && result !== null && typeof result === 'object' && !Array.isArray(result)) {
    return { ...(result as Record<string, unknown>), written: { source, position: s.position } satisfies Written };
  }
  return result;
}

/** The bus with every served handler tracked by withWritePosition (everything else untouched). */
export function trackingWrites<B extends { serve(service: string, handlers: Record<string, (body: unknown) => Promise<unknown>>): Promise<void> }>(bus: B): B {
  return new Proxy(bus, {
    get(target, prop, receiver) {
      if (prop === 'serve') {
        return (service: string, handlers: Record<string, (body: unknown) => Promise<unknown>>) =>
          target.serve(service, Object.fromEntries(Object.entries(handlers).map(([op, h]) => [op, (body: unknown) => withWritePosition(service, () => h(body))])));
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
