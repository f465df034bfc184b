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

  @Field(() => String, { description: 'Held by admission for calls in flight (worst cases, and slices of headroom gateway processes took for calls about to come).' })
  reserved!: string;

  @Field(() => String, { nullable: true, description: 'Limit minus used minus reserved (never below zero); null = unlimited.' })
  remaining!: string | null;

  @Field(() => Boolean, { description: 'At its limit: what the limit leaves cannot pay for a minimal useful call (every key reads suspended and answers 429).' })
  suspended!: boolean;

  @Field(() => String, { description: 'What admission does with a call whose worst case does not fit: refuse (429) or lower_max_tokens.' })
  overflow!: string;
}
