import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType()
export class SessionUserType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  email!: string;

  @Field(() => String, { description: 'owner | admin | viewer' })
  role!: string;

  @Field(() => ID)
  accountId!: string;
}

@ObjectType()
export class LoginPayload {
  @Field(() => String, { description: 'The console session bearer token.' })
  token!: string;

  @Field(() => String, { description: 'ISO 8601 timestamp.' })
  expiresAt!: string;

  @Field(() => SessionUserType)
  user!: SessionUserType;
}
