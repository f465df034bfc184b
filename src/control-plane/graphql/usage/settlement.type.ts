import { Field, ID, ObjectType } from 'type-graphql';
import { SafeInt } from '../common/scalars';
import { TierLineType } from './usage.type';

@ObjectType()
export class SettlementKeyType {
  @Field(() => ID)
  apiKeyId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  dimension!: string;

  @Field(() => [TierLineType])
  tiers!: TierLineType[];

  @Field(() => SafeInt)
  totalTokens!: number;

  @Field(() => String)
  totalAmount!: string;
}

@ObjectType({ description: 'A month statement; a closed one never changes.' })
export class SettlementType {
  @Field(() => String, { description: 'YYYY-MM' })
  month!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => String, { description: 'open | closed' })
  status!: string;

  @Field(() => String, { nullable: true })
  closedAt!: string | null;

  @Field(() => [SettlementKeyType])
  keys!: SettlementKeyType[];

  @Field(() => SafeInt)
  totalTokens!: number;

  @Field(() => String)
  totalAmount!: string;
}
