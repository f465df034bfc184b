import { Arg, ID, Mutation, Resolver, UseMiddleware } from 'type-graphql';
import type { Actor } from '../../../domain/actor';
import type { KeyRotationService } from '../../../domain/keys/key-rotation.service';
import { CurrentActor } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { toApiKeyType } from './api-key.mapper';
import { RotateApiKeyInput } from './rotate-api-key.input';
import { RotateApiKeyPayload } from './rotate-api-key.payload';

@Resolver()
@UseMiddleware(storableArgs, gated)
export class KeyRotationResolver {
  constructor(private readonly rotations: KeyRotationService) {}

  @Mutation(() => RotateApiKeyPayload, {
    description: 'Replaces a key by a successor with the same name, dimension, scope and expiry; the payload is the only place its secret appears.',
  })
  // A transaction: the account, its credit state, the lock, the old key's update, the successor, two audit events, the notify, commit.
  @Cost({ dbRoundTrips: 9 })
  async rotateApiKey(
    @CurrentActor() actor: Actor,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => RotateApiKeyInput, { nullable: true }) input: RotateApiKeyInput | null,
  ): Promise<RotateApiKeyPayload> {
    const graceHours = input?.graceHours ?? undefined;
    const rotated = await this.rotations.rotate(actor, id, graceHours === undefined ? {} : { graceHours });
    return { apiKey: toApiKeyType(rotated.key), secret: rotated.secret, previous: toApiKeyType(rotated.previous) };
  }
}
