import { Arg, Ctx, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import { formatMicros } from '../../../core/decimal';
import type { AccountService } from '../../../domain/accounts/account.service';
import type { Actor } from '../../../domain/actor';
import type { SessionService } from '../../../domain/auth/session.service';
import { CurrentActor, type GraphqlContext } from '../common/context';
import { gated } from '../common/gate.middleware';
import { Cost } from '../common/query-cost';
import { storableArgs } from '../common/storable-args.middleware';
import { LoginPayload } from './login.payload';
import { ViewerType } from './viewer.type';

@Resolver()
@UseMiddleware(storableArgs)
export class SessionResolver {
  constructor(private readonly sessions: SessionService, private readonly accounts: AccountService) {}

  @Mutation(() => LoginPayload, { description: 'The only operation that needs no session.' })
  // The user, the new session (and a password hash's CPU).
  @Cost({ dbRoundTrips: 3 })
  async login(
    @Ctx() { ip }: GraphqlContext,
    @Arg('email', () => String) email: string,
    @Arg('password', () => String) password: string,
  ): Promise<LoginPayload> {
    const grant = await this.sessions.login(email, password, ip);
    return { token: grant.token, expiresAt: grant.expiresAt.toISOString(), user: grant.user };
  }

  @Mutation(() => Boolean, { description: 'Revokes the session whose bearer token made this request.' })
  @Cost({ dbRoundTrips: 2 })
  async logout(@Ctx() { authorization }: GraphqlContext): Promise<boolean> {
    await this.sessions.logout(authorization);
    return true;
  }

  @Query(() => ViewerType)
  @Cost({ dbRoundTrips: 1 })
  @UseMiddleware(gated)
  async viewer(@CurrentActor() actor: Actor): Promise<ViewerType> {
    const account = await this.accounts.get(actor.accountId);
    return {
      id: actor.userId ?? actor.label,
      email: actor.label,
      role: actor.role,
      account: {
        id: account.id,
        name: account.name,
        timezone: account.timezone,
        currency: account.currency,
        creditLimit: account.creditLimitMicros === null ? null : formatMicros(account.creditLimitMicros),
      },
    };
  }
}
