import { z } from 'zod'
import type { Role } from '../permissions'

/** Who a team's two-factor policy covers: nobody, its owners and admins, every member. */
export const twoFactorRequirements = ['off', 'admins', 'everyone'] as const
export type TwoFactorRequirement = typeof twoFactorRequirements[number]

/** Days a member covered by a new policy has to set up a factor before it refuses them. */
export const maxTwoFactorGraceDays = 30

export const SecurityPolicyBody = z.object({
  require_two_factor: z.enum(twoFactorRequirements, { error: `must be one of ${twoFactorRequirements.join(', ')}` }),
  grace_days: z.number({ error: `must be a whole number of days from 0 to ${maxTwoFactorGraceDays}` }).int('must be a whole number of days')
    .min(0, 'must be at least 0 days').max(maxTwoFactorGraceDays, `must be at most ${maxTwoFactorGraceDays} days`).optional(),
})

/** A member the policy covers who has no verified second factor; refused from `since` (in the future: still in the grace period). */
export interface NonCompliantMember {
  user_id: string
  name: string
  role: Role
  since: string
}

/** GET/PUT /api/teams/{teamId}/security-policy. `non_compliant` is there for owners and admins only. */
export interface SecurityPolicy {
  require_two_factor: TwoFactorRequirement
  grace_days: number
  /** When the policy starts refusing members without a factor (set when it changes: then + grace_days), or null while off. */
  enforced_from: string | null
  non_compliant?: NonCompliantMember[]
}
