import { Field, ID, Int, ObjectType } from 'type-graphql';
import { SafeInt } from '../common/scalars';

@ObjectType({ description: 'One of the six price tiers: tokens, unit price per million tokens, amount.' })
export class TierLineType {
  @Field(() => String, { description: 'e.g. no_thinking.input_cache_hit' })
  tier!: string;

  @Field(() => SafeInt)
  tokens!: number;

  @Field(() => String, { description: 'Decimal string per million unified tokens.' })
  unitPrice!: string;

  @Field(() => String, { description: 'Decimal string.' })
  amount!: string;
}

@ObjectType()
export class TierTokensType {
  @Field(() => String)
  tier!: string;

  @Field(() => SafeInt)
  tokens!: number;
}

@ObjectType({ description: 'Usage of one key over account-zone days [start, end].' })
export class KeyUsageType {
  @Field(() => ID)
  apiKeyId!: string;

  @Field(() => String)
  start!: string;

  @Field(() => String)
  end!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => SafeInt)
  calls!: number;

  @Field(() => [TierLineType])
  tiers!: TierLineType[];

  @Field(() => SafeInt)
  totalTokens!: number;

  @Field(() => String)
  totalAmount!: string;
}

@ObjectType({ description: 'One call.' })
export class UsageRecordType {
  @Field(() => String)
  requestId!: string;

  @Field(() => String, { nullable: true, description: "The Responses form's resp_… id (its stored response, while kept); null for the other forms." })
  responseId!: string | null;

  @Field(() => ID)
  apiKeyId!: string;

  @Field(() => String, { description: 'The neutral catalog model of the call.' })
  model!: string;

  @Field(() => String, { description: 'The model name the caller sent: the neutral name or one of its aliases.' })
  requestedModel!: string;

  @Field(() => String, { nullable: true })
  routedModel!: string | null;

  @Field(() => String, { nullable: true })
  provider!: string | null;

  @Field(() => String)
  form!: string;

  @Field(() => Boolean)
  stream!: boolean;

  @Field(() => Boolean)
  thinking!: boolean;

  @Field(() => String, { description: 'ok | upstream_error | blocked | client_aborted' })
  status!: string;

  @Field(() => Boolean, {
    description: "Some figure is the gateway's local count (the upstream's usage never arrived: an aborted call, or a server that reports none).",
  })
  estimated!: boolean;

  @Field(() => String, { nullable: true })
  routeTier!: string | null;

  @Field(() => [TierTokensType])
  tiers!: TierTokensType[];

  @Field(() => SafeInt)
  totalTokens!: number;

  @Field(() => String)
  amount!: string;

  @Field(() => String)
  createdAt!: string;
}

@ObjectType()
export class UsageRecordPageType {
  @Field(() => SafeInt)
  total!: number;

  @Field(() => Int)
  page!: number;

  @Field(() => Int)
  pageSize!: number;

  @Field(() => SafeInt)
  totalTokens!: number;

  @Field(() => String)
  totalAmount!: string;

  @Field(() => [UsageRecordType])
  items!: UsageRecordType[];
}
