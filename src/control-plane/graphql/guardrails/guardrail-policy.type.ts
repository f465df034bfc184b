import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One guardrail rule and the policy in force for the account (docs/architecture.md §6).' })
export class GuardrailPolicyType {
  @Field(() => String, { description: 'The detector rule, e.g. cn-mobile, api-secret, block-list.' })
  rule!: string;

  @Field(() => String, { description: 'pii | secret | injection | blocklist' })
  category!: string;

  @Field(() => String, { description: 'What the account gets without an override: built-in default or catalog policy (block | redact | flag | off).' })
  defaultPolicy!: string;

  @Field(() => String, { description: 'The policy in force: block | redact | flag | off.' })
  policy!: string;

  @Field(() => Boolean, { description: 'True when the account has set this rule’s policy itself.' })
  overridden!: boolean;

  @Field(() => String, { nullable: true, description: 'ISO 8601 timestamp of the account’s last change; null without an override.' })
  updatedAt!: string | null;
}
