import { expect } from 'chai';
import { GuardrailEngineCache, defaultDetectors, resolvePolicies, type GuardrailPolicies } from '../../../src/guardrails';

/** A cache over a policy table the test edits, counting loads. */
function cache(table: Record<string, GuardrailPolicies>) {
  const loads: string[] = [];
  const engines = new GuardrailEngineCache(defaultDetectors([]), async (accountId) => {
    loads.push(accountId);
    const policies = table[accountId];
    if (policies === undefined) throw new Error(`no account ${accountId}`);
    return policies;
  });
  return { engines, loads };
}

const blockMail = () => resolvePolicies({ email: 'block' });

describe('guardrails: engine cache per account', () => {
  it('loads an account’s policies once and serves its engine from then on', async () => {
    const { engines, loads } = cache({ a: blockMail() });
    const first = await engines.get('a');
    expect(await engines.get('a')).to.equal(first);
    expect(loads).to.deep.equal(['a']);
    expect(() => first.inputInspector().text('x@y.com', 'system')).to.throw('"email"');
  });

  it('shares one engine between accounts with the same policies', async () => {
    const { engines } = cache({ a: resolvePolicies(), b: resolvePolicies(), c: blockMail() });
    expect(await engines.get('a')).to.equal(await engines.get('b'));
    expect(await engines.get('c')).not.to.equal(await engines.get('a'));
  });

  it('reloads after forget (a policy change), and after clear (the change feed reconnected)', async () => {
    const table: Record<string, GuardrailPolicies> = { a: resolvePolicies(), b: resolvePolicies() };
    const { engines, loads } = cache(table);
    const before = await engines.get('a');
    await engines.get('b');
    table.a = blockMail();
    engines.forget('a');
    expect(await engines.get('a')).not.to.equal(before);
    expect(await engines.get('b')).to.equal(before);
    engines.clear();
    await engines.get('b');
    expect(loads).to.deep.equal(['a', 'b', 'a', 'b']);
  });

  it('does not remember a failed load', async () => {
    const table: Record<string, GuardrailPolicies> = {};
    const { engines, loads } = cache(table);
    let failed = false;
    await engines.get('a').catch(() => (failed = true));
    expect(failed).to.equal(true);
    table.a = resolvePolicies();
    await engines.get('a');
    expect(loads).to.deep.equal(['a', 'a']);
  });
});
