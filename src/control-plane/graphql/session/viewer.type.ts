import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType()
export class AccountType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'IANA time zone.' })
  timezone!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => String, { nullable: true, description: 'Monthly credit limit as a decimal string; null = unlimited.' })
  creditLimit!: string | null;
}

@ObjectType({ description: 'The signed-in console user.' })
export class ViewerType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  email!: string;

  @Field(() => String, { description: 'owner | admin | viewer' })
  role!: string;

  @Field(() => AccountType)
  account!: AccountType;
}
