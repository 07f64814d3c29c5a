import { describe, expect, it } from 'vitest'
import { columnValueType } from '../../server/utils/records/column-types'

const of = (type: string, allowedValues: string[] | null = null) => columnValueType({ type, allowedValues })

describe('columnValueType: one mapping for validation and the OpenAPI document', () => {
  it.each([
    ['uuid', '0b6e8d1c-1f5e-4a5b-9c7a-2a1d3e4f5a6b', 12, { type: 'string', format: 'uuid' }],
    ['text', 'anything', 1, { type: 'string' }],
    ['character varying(3)', 'abc', 'abcd', { type: 'string', maxLength: 3 }],
    ['integer', 2147483647, 2147483648, { type: 'integer' }],
    ['smallint', -32768, 1.5, { type: 'integer' }],
    ['boolean', false, 'false', { type: 'boolean' }],
    ['date', '2026-02-28', '2026-02-30', { type: 'string', format: 'date' }],
    ['timestamp with time zone', '2026-02-28T10:00:00Z', '2026-02-28 10:00', { type: 'string', format: 'date-time' }],
    ['timestamp(3) with time zone', '2026-02-28T10:00:00.123Z', 'yesterday', { type: 'string', format: 'date-time' }],
    ['timestamp without time zone', '2026-02-28T10:00:00', '2026-02-28', { type: 'string', format: 'date-time' }],
    ['numeric(10,2)', 12.5, '12.5', { type: 'number' }],
    ['text[]', ['a', 'b'], 'a,b', { type: 'array', items: { type: 'string' } }],
  ])('%s: accepts what the document describes and refuses the rest', (type, good, bad, json) => {
    const { zod, json: schema } = of(type)
    expect(schema).toEqual(json)
    expect(zod.safeParse(good).success).toBe(true)
    expect(zod.safeParse(bad).success).toBe(false)
  })

  it('a list CHECK is an enum on both sides', () => {
    const { zod, json } = of('text', ['todo', 'done'])
    expect(json).toEqual({ type: 'string', enum: ['todo', 'done'] })
    expect(zod.safeParse('done').success).toBe(true)
    expect(zod.safeParse('doing').success).toBe(false)
  })

  it('json accepts any JSON value and documents no type', () => {
    const { zod, json } = of('jsonb')
    expect(json).toEqual({})
    expect(zod.safeParse({ a: [1, null] }).success).toBe(true)
    expect(zod.safeParse(undefined).success).toBe(false)
  })
})
