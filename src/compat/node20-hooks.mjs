const SHIM = new URL('./fs-with-glob.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'node:fs' || specifier === 'fs') && context.parentURL?.includes('/@mikro-orm/')) {
    return { url: SHIM, shortCircuit: true, format: 'module' };
  }
  return nextResolve(specifier, context);
}
