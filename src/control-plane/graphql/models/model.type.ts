import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A neutral model name from the catalog.' })
export class ModelType {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  displayName!: string;

  @Field(() => String)
  createdAt!: string;
}
