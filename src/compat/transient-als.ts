// MikroORM wraps every flush in `AsyncLocalStorage.run()` (a guard against
// flushing inside a flush). On Node 20 the first `run()` of any storage
// installs promise hooks for the whole process, for good, and from then on
// every promise of every data-plane call pays for them (a visible share of
// the gateway's CPU in `npm run bench`), although only control-plane writes ever
// flush. This storage, which MikroORM picks up through the
// `globalThis.AsyncLocalStorage` it looks for first (src/entry.ts sets it),
// disables itself whenever no `run()` is in progress, which uninstalls the
// hooks until the next flush. Stores are only read inside `run()`, which is
// all MikroORM's flush guard and transaction context need.
import { AsyncLocalStorage } from 'node:async_hooks';

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

export class TransientAsyncLocalStorage<T> extends AsyncLocalStorage<T> {
  private running = 0;

  override run<R>(store: T, callback: () => R): R;
  override run<R, TArgs extends unknown[]>(store: T, callback: (...args: TArgs) => R, ...args: TArgs): R;
  override run<R, TArgs extends unknown[]>(store: T, callback: (...args: TArgs) => R, ...args: TArgs): R {
    this.running += 1;
    let result: R;
    try {
      result = super.run(store, callback, ...args);
    } catch (error) {
      this.settled();
      throw error;
    }
    if (!isPromiseLike(result)) {
      this.settled();
      return result;
    }
    return result.then(
      (value) => {
        this.settled();
        return value;
      },
      (error: unknown) => {
        this.settled();
        throw error;
      },
    ) as R;
  }

  private settled(): void {
    this.running -= 1;
    if (this.running === 0) this.disable();
  }
}
