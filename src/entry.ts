// The production entry (dist/main.mjs, see scripts/build-gateway.ts): hands
// MikroORM a self-disabling AsyncLocalStorage before any of its modules load,
// then loads the gateway itself (dist/gateway.mjs, built from src/main.ts).
// The import of the gateway is dynamic so that it runs after the line above:
// static imports would be evaluated first.
import { TransientAsyncLocalStorage } from './compat/transient-als';

(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage = TransientAsyncLocalStorage;

const gateway = './gateway.mjs';
await import(gateway);
