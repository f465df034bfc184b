// fast-check arbitraries derived from the OpenAPI contracts: `valid` builds
// values that satisfy a request schema, `nearValid` breaks one to three spots
// of such a value (missing fields, wrong types, nulls, huge strings, deep
// nesting, odd unicode, extra and prototype-polluting keys, extreme numbers).
// Near-valid bodies reach the decoders and services; purely random ones
// mostly stop at schema validation.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>;

/** Picks a generator for a property by its name (e.g. bias `model` towards catalog names); undefined: derive from the schema. */
export type Override = (name: string, schema: Schema) => fc.Arbitrary<Json> | undefined;

export class ContractArbitraries {
  readonly doc: any;

  constructor(
    file: string,
    private readonly override: Override = () => undefined,
  ) {
    this.doc = parse(readFileSync(file, 'utf8'));
  }

  resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
      const path = (current.$ref as string).replace(/^#\//, '').split('/');
      current = path.reduce((node: any, key) => node?.[key], this.doc);
    }
    return current ?? {};
  }

  /** allOf branches folded into one object schema. */
  private merged(schema: Schema): Schema {
    if (!schema.allOf) return schema;
    const out: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of [schema, ...schema.allOf.map((s: Schema) => this.merged(this.resolve(s)))]) {
      Object.assign(out.properties, part.properties ?? {});
      out.required.push(...(part.required ?? []));
    }
    return out;
  }

  valid(input: Schema, name = '', depth = 0): fc.Arbitrary<Json> {
    const schema = this.merged(this.resolve(input));
    const chosen = name ? this.override(name, schema) : undefined;
    if (chosen) return chosen;
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
    const branches = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => this.valid(b, name, depth + 1)));
    switch (schema.type) {
      case 'string':
        return stringFor(schema);
      case 'integer':
        return fc.integer({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 100_000 });
      case 'number':
        return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const min = schema.minItems ?? 0;
        return fc.array(this.valid(schema.items ?? {}, '', depth + 1), { minLength: min, maxLength: Math.max(min, depth > 3 ? 1 : 3) });
      }
      default:
        break;
    }
    const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
    if (schema.type === 'object' || properties.length > 0) {
      if (properties.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, { maxKeys: 3 });
      const record: Record<string, fc.Arbitrary<Json>> = {};
      for (const [key, child] of properties) record[key] = this.valid(child, key, depth + 1);
      return fc.record(record, { requiredKeys: (schema.required ?? []) as string[] }) as fc.Arbitrary<Json>;
    }
    return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }

  /** A valid value with one to three spots broken (send it with `serialize`). */
  nearValid(schema: Schema): fc.Arbitrary<Json> {
    return fc.tuple(this.valid(schema), fc.array(fc.tuple(fc.nat(), MUTATION), { minLength: 1, maxLength: 3 })).map(([value, mutations]) =>
      // Generated values may be shared between runs: mutate a copy. Deep nesting goes last, as a marker.
      [...mutations]
        .sort(([, a], [, b]) => Number(a.kind === 'deep') - Number(b.kind === 'deep'))
        .reduce<Json>((current, [at, mutation]) => mutate(current, at, mutation), structuredClone(value)),
    );
  }
}

function stringFor(schema: Schema): fc.Arbitrary<Json> {
  if (schema.format === 'date' || schema.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return calendarDate();
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  if (schema.format === 'email') return fc.emailAddress();
  const min = schema.minLength ?? 0;
  return fc.string({ minLength: min, maxLength: Math.max(min, Math.min(schema.maxLength ?? 24, 24)) });
}

/** Dates around today, mostly real ones, so that date-range rules are reached. */
export function calendarDate(): fc.Arbitrary<string> {
  return fc.integer({ min: -400, max: 400 }).map((days) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10));
}

// ---- mutations ---------------------------------------------------------------

type Mutation =
  | { kind: 'delete' | 'null' | 'wrong-type' | 'empty' }
  | { kind: 'replace'; value: Json }
  | { kind: 'huge-string'; chars: number }
  | { kind: 'deep'; depth: number; arrays: boolean }
  | { kind: 'extra-field'; key: string; value: Json };

/** Strings that have broken parsers and databases before. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  'lone \udfff surrogate',
  '\u202eRTL override',
  'zero\u200bwidth',
  '💥🔥'.repeat(50),
  'e\u0301\u0301\u0301',
  '../../etc/passwd',
  "'; drop table usage_records; --",
  '%00%ff',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  'NaN',
  '-1',
  '9'.repeat(400),
  '2026-02-30',
  '0000-00-00',
  '9999-12-31',
  '2026-13',
];

const ODD_NUMBERS: Json[] = [0, -0, -1, 1.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 53), 1e300, -1e300, Number.MIN_VALUE];

const MUTATION: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: 'delete' as const }),
  fc.constant({ kind: 'null' as const }),
  fc.constant({ kind: 'wrong-type' as const }),
  fc.constant({ kind: 'empty' as const }),
  fc.record({ kind: fc.constant('replace' as const), value: fc.constantFrom<Json>(...ODD_STRINGS, ...ODD_NUMBERS, true, [], {}) }),
  fc.record({ kind: fc.constant('replace' as const), value: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> }),
  fc.record({ kind: fc.constant('replace' as const), value: fc.string({ unit: 'binary', maxLength: 40 }) }),
  fc.record({ kind: fc.constant('huge-string' as const), chars: fc.constantFrom(70_000, 300_000) }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.constantFrom(64, 1_000, 20_000), arrays: fc.boolean() }),
  fc.record({
    kind: fc.constant('extra-field' as const),
    key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''), fc.string({ maxLength: 12 })),
    value: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
  }),
);

interface Spot {
  parent: Json[] | { [key: string]: Json } | null;
  key: string | number | null;
  value: Json;
}

function spots(value: Json, parent: Spot['parent'] = null, key: Spot['key'] = null, out: Spot[] = []): Spot[] {
  out.push({ parent, key, value });
  if (Array.isArray(value)) value.forEach((item, i) => spots(item, value, i, out));
  else if (value !== null && typeof value === 'object' && !(value instanceof Deep)) for (const [k, v] of Object.entries(value)) spots(v, value, k, out);
  return out;
}

function hugeString(chars: number): string {
  const words = ['lorem', 'ipsum', '数据', 'données', 'δεδομένα', '🙂', 'x1', 'ZZ', '\n'];
  let out = '';
  for (let i = 0; out.length < chars; i++) out += `${words[(i * 7 + (i >> 3)) % words.length]} `;
  return out.slice(0, chars);
}

/**
 * Nesting deeper than JSON.stringify can write (a few thousand levels) stands
 * in the value as a marker object; `serialize` writes it out as text.
 */
class Deep {
  constructor(
    readonly depth: number,
    readonly arrays: boolean,
    readonly inner: Json,
  ) {}
}

/** JSON text of a (possibly mutated) value, deep-nesting markers written out. */
export function serialize(value: Json): string {
  const deeps: Deep[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof Deep)) return v;
    deeps.push(v);
    return `@@deep${deeps.length - 1}@@`;
  });
  return text.replace(/"@@deep(\d+)@@"/g, (_m, i: string) => {
    const d = deeps[Number(i)]!;
    const inner = JSON.stringify(d.inner) ?? 'null';
    return d.arrays ? `${'['.repeat(d.depth)}${inner}${']'.repeat(d.depth)}` : `${'{"a":'.repeat(d.depth)}${inner}${'}'.repeat(d.depth)}`;
  });
}

function wrongType(value: Json): Json {
  if (typeof value === 'string') return value.length;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 0;
  if (Array.isArray(value)) return { 0: value[0] ?? null };
  if (value === null) return 'null';
  return [value];
}

function empty(value: Json): Json {
  if (Array.isArray(value)) return [];
  if (value !== null && typeof value === 'object') return {};
  if (typeof value === 'number') return 0;
  return '';
}

function mutate(value: Json, at: number, mutation: Mutation): Json {
  const all = spots(value);
  const spot = all[at % all.length]!;
  let replacement: Json | undefined;
  switch (mutation.kind) {
    case 'delete':
      if (spot.parent === null) return {};
      if (Array.isArray(spot.parent)) spot.parent.splice(spot.key as number, 1);
      else delete spot.parent[spot.key as string];
      return value;
    case 'null':
      replacement = null;
      break;
    case 'wrong-type':
      replacement = wrongType(spot.value);
      break;
    case 'empty':
      replacement = empty(spot.value);
      break;
    case 'replace':
      replacement = structuredClone(mutation.value);
      break;
    case 'huge-string':
      replacement = hugeString(mutation.chars);
      break;
    case 'deep':
      replacement = new Deep(mutation.depth, mutation.arrays, spot.value) as unknown as Json;
      break;
    case 'extra-field': {
      const target = spot.value !== null && typeof spot.value === 'object' && !Array.isArray(spot.value) ? spot.value : null;
      if (target) {
        // Defined as an own property, as JSON.parse on the server would make it (even for `__proto__`).
        Object.defineProperty(target, mutation.key, { value: structuredClone(mutation.value), enumerable: true, writable: true, configurable: true });
        return value;
      }
      replacement = Object.defineProperty({}, mutation.key, { value: structuredClone(mutation.value), enumerable: true, writable: true, configurable: true });
      break;
    }
  }
  if (spot.parent === null) return replacement;
  if (Array.isArray(spot.parent)) spot.parent[spot.key as number] = replacement;
  else spot.parent[spot.key as string] = replacement;
  return value;
}
