import { enumParam, intParam, stringParam } from '../../rest/query-params';

// GraphQL has already typed the arguments; these apply the same ranges and
// allowed values as the REST query parameters, naming the argument at fault.

export function intArg(name: string, value: number | null | undefined, fallback: number, min: number, max: number): number {
  return intParam({ [name]: value ?? undefined }, name, fallback, min, max);
}

export function enumArg<T extends string>(name: string, value: string | null | undefined, allowed: readonly T[]): T | undefined {
  return enumParam({ [name]: value ?? undefined }, name, allowed);
}

export function stringArg(name: string, value: string | null | undefined, maxLength: number): string | undefined {
  return stringParam({ [name]: value ?? undefined }, name, maxLength);
}
