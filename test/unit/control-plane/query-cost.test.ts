// The GraphQL cost rule (issue 28) prices database work: every operation
// declares its round trips, the console's own queries fit the budget, and
// aliases of one field past the cap are refused whatever they cost.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse, validate, type GraphQLSchema } from 'graphql';
import { MAX_FIELD_REPEATS, MAX_QUERY_COST, ROUND_TRIP_COST, costLimitRule } from '../../../src/control-plane/graphql/cost-limit.rule';
import { fieldCost } from '../../../src/control-plane/graphql/common/query-cost';
import { buildGraphqlSchema } from '../../../src/control-plane/graphql/schema';
import { PROJECT_ROOT } from '../../../src/paths';

describe('GraphQL query cost', () => {
  let schema: GraphQLSchema;
  before(async () => {
    schema = await buildGraphqlSchema();
  });

  const errorsOf = (query: string) => validate(schema, parse(query), [costLimitRule()]).map((e) => ({ code: (e.originalError as { code?: string } | undefined)?.code, message: e.message }));

  it('has a declared database cost on every query and mutation', () => {
    for (const root of [schema.getQueryType(), schema.getMutationType()]) {
      for (const field of Object.values(root!.getFields())) expect(fieldCost(field), `${root!.name}.${field.name}`).to.not.equal(undefined);
    }
    expect(fieldCost(schema.getQueryType()!.getFields().models)?.dbRoundTrips, 'models come from memory').to.equal(0);
  });

  it('lets every query and mutation of the console through', () => {
    const dir = path.join(PROJECT_ROOT, 'web', 'src', 'graphql');
    const files = readdirSync(dir).filter((f) => f.endsWith('.graphql'));
    expect(files.length).to.be.greaterThan(0);
    for (const file of files) expect(errorsOf(readFileSync(path.join(dir, file), 'utf8')), file).to.deep.equal([]);
  });

  it('prices a database field by its round trips, so 10,000 aliases of creditStatus { month } are refused twice over', () => {
    const flood = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: creditStatus { month }`).join(' ')} }`;
    const codes = errorsOf(flood).map((e) => e.code);
    expect(codes).to.deep.equal(['too_many_aliases', 'query_too_costly']);
    // Once per field, at most the cap: the same query with few enough aliases passes.
    const allowed = `{ ${Array.from({ length: MAX_FIELD_REPEATS }, (_, i) => `a${i}: creditStatus { month }`).join(' ')} }`;
    expect(errorsOf(allowed)).to.deep.equal([]);
    expect(MAX_FIELD_REPEATS * 2 * ROUND_TRIP_COST).to.be.below(MAX_QUERY_COST);
  });

  it('counts repeats through fragments and nested aliases, not just at the root', () => {
    const viaFragments = 'fragment F on Query { creditStatus { month } } { ...F ...F ...F a: creditStatus { month } b: creditStatus { month } c: creditStatus { month } }';
    expect(errorsOf(viaFragments)[0]?.message).to.match(/^creditStatus: asked for more than 5 times/);
    const nested = `{ viewer { ${Array.from({ length: 6 }, (_, i) => `e${i}: email`).join(' ')} } }`;
    expect(errorsOf(nested).map((e) => e.code)).to.deep.equal(['too_many_aliases']);
  });

  it('refuses a cheap-looking query whose round trips add up: five usage pages and five settlements', () => {
    const query = `{ ${Array.from({ length: 5 }, (_, i) => `u${i}: usageRecords(pageSize: 1) { total } s${i}: settlement(month: "2026-11") { month }`).join(' ')} }`;
    expect(errorsOf(query).map((e) => e.code)).to.deep.equal(['query_too_costly']);
  });

  it('stops walking a fragment bomb as soon as it is over budget', () => {
    const levels = 30;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i === levels - 1 ? `fragment F${i} on ViewerType { id email role }` : `fragment F${i} on ViewerType { ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    const started = Date.now();
    const errors = errorsOf(`{ viewer { ...F0 } }\n${fragments}`);
    expect(errors.map((e) => e.code)).to.include('query_too_costly');
    expect(Date.now() - started, 'walked 2^30 fields?').to.be.below(5_000);
  });
});
