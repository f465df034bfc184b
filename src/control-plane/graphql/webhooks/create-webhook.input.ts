import { Field, InputType } from 'type-graphql';

@InputType()
export class CreateWebhookInput {
  @Field(() => String, { description: 'http or https, no credentials; the host must resolve to public addresses unless GATEWAY_WEBHOOK_ALLOW_PRIVATE=1.' })
  url!: string;

  @Field(() => [String], { description: 'Non-empty; event types without repeats.' })
  events!: string[];
}
