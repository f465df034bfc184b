import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { TransientAsyncLocalStorage } from '../../../src/compat/transient-als';

describe('TransientAsyncLocalStorage (MikroORM flush context)', () => {
  it('keeps each run its own store across awaits while runs overlap, and holds none once all have settled', async () => {
    const storage = new TransientAsyncLocalStorage<string>();
    const seen: string[] = [];
    const task = (name: string, ms: number) =>
      storage.run(name, async () => {
        await sleep(ms);
        seen.push(`${name}:${storage.getStore()}`);
        await sleep(ms);
        seen.push(`${name}:${storage.getStore()}`);
        return name;
      });
    const results = await Promise.all([task('a', 5), task('b', 12), task('c', 1)]);
    expect(results).to.deep.equal(['a', 'b', 'c']);
    expect(seen.sort()).to.deep.equal(['a:a', 'a:a', 'b:b', 'b:b', 'c:c', 'c:c']);
    expect(storage.getStore()).to.equal(undefined);
    // A later run works again after the storage disabled itself.
    expect(await storage.run('d', async () => storage.getStore())).to.equal('d');
  });

  it('passes through synchronous results and errors, settling either way', async () => {
    const storage = new TransientAsyncLocalStorage<number>();
    expect(storage.run(1, () => storage.getStore())).to.equal(1);
    expect(() => storage.run(2, () => {
      throw new Error('sync');
    })).to.throw('sync');
    let error: unknown;
    await storage.run(3, async () => Promise.reject(new Error('async'))).catch((e: unknown) => (error = e));
    expect((error as Error).message).to.equal('async');
    expect(await storage.run(4, async () => storage.getStore())).to.equal(4);
  });
});
