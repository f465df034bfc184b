import { Field, ObjectType } from 'type-graphql';

@ObjectType()
export class CreditStatusType {
  @Field(() => String, { nullable: true, description: 'Decimal string; null = unlimited.' })
  creditLimit!: string | null;

  @Field(() => String)
  currency!: string;

  @Field(() => String, { description: 'YYYY-MM in the account time zone.' })
  month!: string;

  @Field(() => String)
  monthUsed!: string;

  @Field(() => String, { nullable: true })
  remaining!: string | null;

  @Field(() => Boolean)
  suspended!: boolean;
}
