import { expect } from 'chai';
import { createAccount, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { createKeyGql, gql, KEY_MUTATIONS, setExpiresAt, uniqueName, zoneToday } from './graphql-client';

type Start = 'active' | 'suspended' | 'cancelled' | 'expired' | 'expired, then suspended';
type Operation = 'suspend' | 'resume' | 'cancel' | 'update name';
type Outcome = { status: string } | { error: string };

// docs/architecture.md §14: suspend is idempotent and refused on cancelled keys; resume of an
// expired key lands in `expired` (expiry is derived); cancel is idempotent;
// cancelled keys cannot be updated.
const TABLE: Array<[Start, Operation, Outcome]> = [
  ['active', 'suspend', { status: 'suspended' }],
  ['active', 'resume', { status: 'active' }],
  ['active', 'cancel', { status: 'cancelled' }],
  ['active', 'update name', { status: 'active' }],
  ['suspended', 'suspend', { status: 'suspended' }],
  ['suspended', 'resume', { status: 'active' }],
  ['suspended', 'cancel', { status: 'cancelled' }],
  ['suspended', 'update name', { status: 'suspended' }],
  ['cancelled', 'suspend', { error: 'key_cancelled' }],
  ['cancelled', 'resume', { error: 'key_cancelled' }],
  ['cancelled', 'cancel', { status: 'cancelled' }],
  ['cancelled', 'update name', { error: 'key_cancelled' }],
  ['expired', 'suspend', { status: 'suspended' }],
  ['expired', 'resume', { status: 'expired' }],
  ['expired', 'cancel', { status: 'cancelled' }],
  ['expired', 'update name', { status: 'expired' }],
  ['expired, then suspended', 'resume', { status: 'expired' }],
  ['expired, then suspended', 'cancel', { status: 'cancelled' }],
];

const MUTATION: Record<Operation, string> = {
  suspend: KEY_MUTATIONS.suspend,
  resume: KEY_MUTATIONS.resume,
  cancel: KEY_MUTATIONS.cancel,
  'update name': KEY_MUTATIONS.update,
};

describe('GraphQL key state machine', () => {
  let t: TestApp;
  let owner: TestAccount;

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'UTC' });
  });
  after(async () => t.close());

  async function status(id: string): Promise<string> {
    const response = await gql(t, 'query($id: ID!) { apiKey(id: $id) { status } }', { id }, owner.token);
    return response.data.apiKey.status;
  }

  async function keyIn(start: Start): Promise<string> {
    const expiring = start.startsWith('expired');
    const { apiKey } = await createKeyGql(t, owner.token, expiring ? { expiresAt: zoneToday('UTC') } : {});
    if (expiring) await setExpiresAt(apiKey.id, '2001-01-01');
    if (start === 'suspended' || start === 'expired, then suspended') await gql(t, MUTATION.suspend, { id: apiKey.id }, owner.token);
    if (start === 'cancelled') await gql(t, MUTATION.cancel, { id: apiKey.id }, owner.token);
    expect(await status(apiKey.id), `setting up a ${start} key`).to.equal(start === 'expired, then suspended' ? 'suspended' : start);
    return apiKey.id;
  }

  for (const [start, operation, outcome] of TABLE) {
    const expected = 'status' in outcome ? `→ ${outcome.status}` : `→ ${outcome.error}`;
    it(`${operation} on a ${start} key ${expected}`, async () => {
      const id = await keyIn(start);
      const before = await status(id);
      const name = uniqueName('renamed');
      const response = await gql(t, MUTATION[operation], { id, input: { name } }, owner.token);
      if ('error' in outcome) {
        expect(response.errors, response.text).to.have.length(1);
        expect(response.errors![0]!.extensions).to.include({ code: outcome.error, http: 409 });
        expect(response.data).to.equal(null);
        expect(await status(id), 'a refused operation leaves the key as it was').to.equal(before);
      } else {
        expect(response.errors, response.text).to.equal(undefined);
        expect(response.data.result.status).to.equal(outcome.status);
        expect(await status(id), 'the new state is what later reads see').to.equal(outcome.status);
        if (operation === 'update name') expect(response.data.result.name).to.equal(name);
        if (outcome.status === 'suspended') expect(response.data.result.suspendedReason).to.equal('owner');
        else expect(response.data.result.suspendedReason).to.equal(null);
      }
    });
  }

  it('updating an expired key to a future expiresAt revives it', async () => {
    const id = await keyIn('expired');
    const response = await gql(t, MUTATION['update name'], { id, input: { expiresAt: '2999-12-31' } }, owner.token);
    expect(response.data.result).to.include({ status: 'active', expiresAt: '2999-12-31' });
  });
});
