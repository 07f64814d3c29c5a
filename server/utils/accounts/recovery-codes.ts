import { createHash, randomInt } from 'node:crypto'
import type { Queryable } from '../db-drivers'

const codeCount = 10
// no 0/o, 1/l/i: codes are read off paper
const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789'

function newCode(): string {
  const characters = Array.from({ length: 15 }, () => alphabet[randomInt(alphabet.length)])
  return [0, 5, 10].map(start => characters.slice(start, start + 5).join('')).join('-')
}

/** A code's stored form: SHA-256 of its letters and digits (codes are long and random, so a fast hash is enough). */
function hashCode(code: string): string {
  return createHash('sha256').update(code.toLowerCase().replace(/[^a-z0-9]/g, '')).digest('hex')
}

/** Replaces the account's recovery codes with a new set of 10; answers the codes (shown once, stored hashed). */
export async function replaceRecoveryCodes(db: Queryable, userId: string): Promise<string[]> {
  const codes = Array.from({ length: codeCount }, newCode)
  await db.query('delete from public.recovery_codes where user_id = $1', [userId])
  await db.query(
    'insert into public.recovery_codes (user_id, code_hash) select $1, unnest($2::text[])',
    [userId, codes.map(hashCode)],
  )
  return codes
}

/** Uses one recovery code of the account: true once, false when unknown or already used. */
export async function useRecoveryCode(db: Queryable, userId: string, code: string): Promise<boolean> {
  if (code.length > 64) return false
  const { rowCount } = await db.query(
    'update public.recovery_codes set used_at = now() where user_id = $1 and code_hash = $2 and used_at is null',
    [userId, hashCode(code)],
  )
  return rowCount > 0
}

/** How many of the account's recovery codes are still unused. */
export async function recoveryCodesRemaining(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from public.recovery_codes where user_id = $1 and used_at is null', [userId])
  return rows[0]!.n
}

/** Forgets the account's recovery codes (its last factor is gone). */
export async function deleteRecoveryCodes(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from public.recovery_codes where user_id = $1', [userId])
}
