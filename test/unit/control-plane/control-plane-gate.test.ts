// The control-plane gate (issue 28): a few operations at once per process, a
// share per account, a bounded queue, and a deadline per request.
import { expect } from 'chai';
import { ControlPlaneGate } from '../../../src/control-plane/control-plane-gate';
import { AppError } from '../../../src/errors';

const limits = { maxRunning: 3, maxRunningPerAccount: 2, maxWaiting: 4, maxWaitingPerAccount: 2, timeoutMs: 10_000 };

/** A piece of work that finishes when told to. */
function held<T = string>(value: T) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let started = false;
  return {
    work: async () => {
      started = true;
      await done;
      return value;
    },
    finish: () => finish(),
    get started() {
      return started;
    },
  };
}

const codeOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof AppError ? `${error.status} ${error.code}` : String(error);
  }
};
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('ControlPlaneGate', () => {
  it('runs two per account and three in all; the rest wait their turn in order, past the queues 429 (account) or 503 (process)', async () => {
    const gate = new ControlPlaneGate(limits);
    const a = [held('a1'), held('a2'), held('a3'), held('a4'), held('a5')];
    const runs = a.slice(0, 4).map((h) => gate.run('A', h.work));
    await tick();
    expect(a.map((h) => h.started)).to.deep.equal([true, true, false, false, false]);
    // A's third and fourth wait; a fifth finds A's queue full.
    expect(await codeOf(gate.run('A', a[4]!.work))).to.equal('429 too_many_requests');
    // Another account still gets the one turn left, then waits like the rest.
    const b = [held('b1'), held('b2'), held('b3')];
    const bRuns = b.map((h) => gate.run('B', h.work));
    await tick();
    expect(b.map((h) => h.started)).to.deep.equal([true, false, false]);
    expect(gate.load).to.deep.equal({ running: 3, waiting: 4 });
    expect(await codeOf(gate.run('C', held('c').work))).to.equal('503 control_plane_busy');

    // A turn freed goes to the first waiter that is under its account's share.
    a[0]!.finish();
    expect(await runs[0]).to.equal('a1');
    await tick();
    expect(a[2]!.started).to.equal(true);
    b[0]!.finish();
    await tick();
    expect(b[1]!.started).to.equal(true);
    for (const h of [...a, ...b]) h.finish();
    expect(await Promise.all([...runs, ...bRuns])).to.deep.equal(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3']);
    expect(gate.load).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('answers 503 control_plane_timeout at the deadline, waiting or working, and holds the turn until the work has really ended', async () => {
    const gate = new ControlPlaneGate({ ...limits, timeoutMs: 50 });
    const slow = held('slow');
    const slower = held('slower');
    const started = Date.now();
    const first = codeOf(gate.run('A', slow.work));
    const second = codeOf(gate.run('A', slower.work));
    const waiting = codeOf(gate.run('A', held('never').work));
    expect(await first).to.equal('503 control_plane_timeout');
    expect(await second).to.equal('503 control_plane_timeout');
    expect(await waiting).to.equal('503 control_plane_timeout');
    expect(Date.now() - started).to.be.below(2_000);
    // The timed-out work still runs, so the account's turns are still taken.
    expect(gate.load.running).to.equal(2);
    slow.finish();
    slower.finish();
    await tick();
    expect(gate.load).to.deep.equal({ running: 0, waiting: 0 });
    // A request past its deadline starts nothing.
    const late = held('late');
    expect(await codeOf(gate.run('A', late.work, Date.now() - 1))).to.equal('503 control_plane_timeout');
    expect(late.started).to.equal(false);
  });

  it('reports a statement PostgreSQL cancelled (statement_timeout) as control_plane_timeout, other errors as they are', async () => {
    const gate = new ControlPlaneGate(limits);
    const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(await codeOf(gate.run('A', () => Promise.reject(new Error('wrapped', { cause: cancelled }))))).to.equal('503 control_plane_timeout');
    expect(await codeOf(gate.run('A', () => Promise.reject(new AppError('not_found', 'key_not_found', 'no such key'))))).to.equal('404 key_not_found');
    expect(gate.load).to.deep.equal({ running: 0, waiting: 0 });
  });
});
