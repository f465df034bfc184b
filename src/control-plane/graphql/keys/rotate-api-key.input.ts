import { Field, InputType, Int } from 'type-graphql';

@InputType()
export class RotateApiKeyInput {
  @Field(() => Int, {
    nullable: true,
    description: 'Hours the old key keeps working, 0–720 (default 24); 0 is the emergency rotation: the old key is suspended at once.',
  })
  graceHours?: number | null;
}
