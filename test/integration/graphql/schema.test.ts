import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { renderSchema } from '../../../src/control-plane/graphql/schema';

describe('schema/schema.graphql', () => {
  it('is what the TypeGraphQL resolvers emit (run npm run generate after changing them)', async () => {
    const committed = await readFile(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(await renderSchema()).to.equal(committed);
  });

  it('carries the generator banner and the operations of docs/architecture.md §16.4', async () => {
    const schema = await renderSchema();
    expect(schema.startsWith('# Generated from the TypeGraphQL resolvers by scripts/generate.ts; do not edit.\n')).to.equal(true);
    for (const query of ['viewer', 'apiKeys', 'apiKey', 'keyUsage', 'usageRecords', 'settlement', 'models', 'creditStatus', 'auditEvents', 'guardrailPolicies']) {
      expect(schema, query).to.match(new RegExp(`\\n  ${query}[(:]`));
    }
    for (const mutation of ['createApiKey', 'updateApiKey', 'suspendApiKey', 'resumeApiKey', 'cancelApiKey', 'login', 'logout', 'setGuardrailPolicy', 'resetGuardrailPolicy']) {
      expect(schema, mutation).to.match(new RegExp(`\\n  ${mutation}[(:]`));
    }
  });
});
