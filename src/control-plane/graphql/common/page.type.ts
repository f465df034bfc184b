import { Field, Int, ObjectType, type ClassType } from 'type-graphql';

/** The paging envelope shared by list queries (TypeGraphQL's generic-type pattern). */
export function PageType<T extends object>(itemType: ClassType<T>) {
  // Never referenced by a field itself, so it is not emitted; only the concrete subclasses are.
  @ObjectType()
  abstract class Page {
    @Field(() => Int)
    total!: number;

    @Field(() => Int)
    page!: number;

    @Field(() => Int)
    pageSize!: number;

    @Field(() => [itemType])
    items!: T[];
  }
  return Page;
}
