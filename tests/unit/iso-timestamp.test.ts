import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, isoTimestamp, type Database } from '../../server/utils/db/db-drivers'

// A list page reads its timestamps as text and answers them as they are; the answer must be the
// same JSON as when pg made a Date of each and JSON printed it. The texts come from the database
// itself (the embedded one prints them as a Postgres server does).
const parseWithPg = pg.types.getTypeParser(1184) as (text: string) => unknown
const asJson = (value: unknown) => JSON.parse(JSON.stringify({ value })).value as unknown

let db: Database

beforeAll(async () => {
  db = createDatabase({ dataDir: 'memory://' })
  // the embedded database starts on its first statement (seconds on a busy machine)
  await db.query('select 1')
}, 60_000)

afterAll(async () => {
  await db.close()
})

async function texts(sql: string): Promise<string[]> {
  const { rows } = await db.query<{ text: string }>(sql)
  return rows.map(row => row.text)
}

describe('isoTimestamp', () => {
  it('answers what JSON makes of pg\'s Date for 5,000 timestamps with every length of fraction', async () => {
    // whole seconds at random, and a fraction of every length (none, then 1 to 6 digits) in turn
    // with one of random microseconds: each length is there whatever random() gives
    const values = await texts(`select (timestamptz '2026-11-25 08:00:00+00' + make_interval(secs => floor(random() * 1e9 - 5e8))
        + case when i % 2 = 0 then floor(random() * 1e6) else (array[0, 500000, 120000, 123000, 123400, 123450, 123456])[1 + (i / 2) % 7] end * interval '1 microsecond')::text as text
      from generate_series(1, 5000) i`)
    const fractions = new Set(values.map(text => /\.(\d+)/.exec(text)?.[1]?.length ?? 0))
    expect([...fractions].sort()).toEqual([0, 1, 2, 3, 4, 5, 6])
    for (const text of values) expect(isoTimestamp(text), text).toBe(asJson(parseWithPg(text)))
  })

  it('keeps pg\'s truncation of the fraction to milliseconds', () => {
    expect(isoTimestamp('2026-11-25 08:29:45.588907+00')).toBe('2026-11-25T08:29:45.588Z')
    expect(isoTimestamp('2026-11-25 08:29:45.5+00')).toBe('2026-11-25T08:29:45.500Z')
    expect(isoTimestamp('2026-11-25 08:29:45.0015+00')).toBe('2026-11-25T08:29:45.001Z')
    expect(isoTimestamp('2026-11-25 08:29:45+00')).toBe('2026-11-25T08:29:45.000Z')
  })

  it('answers the rare forms (other zones, early and BC years, infinity) as pg\'s Date would print', async () => {
    const values = [
      ...await texts(`select v::text as text from unnest(array['0099-03-04 05:06:07.891+00', '0001-01-01 00:00:00+00', '2000-01-01 00:00:00+00 BC',
        '12000-01-01 00:00:00+00', 'infinity', '-infinity']::timestamptz[]) v`),
      ...await db.transaction(async (tx) => {
        await tx.query(`set local timezone = 'Asia/Kolkata'`)
        const { rows } = await tx.query<{ text: string }>(`select (timestamptz '2026-11-25 08:00:00.123456+00' + i * interval '1 hour')::text as text from generate_series(1, 3) i`)
        return rows.map(row => row.text)
      }),
    ]
    expect(values).toContain('infinity')
    expect(values.some(text => text.endsWith('+05:30'))).toBe(true)
    for (const text of values) expect(asJson(isoTimestamp(text)), text).toEqual(asJson(parseWithPg(text)))
  })
})
