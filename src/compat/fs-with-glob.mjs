export * from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync is not available on this Node.js version (install tinyglobby)');
}
