import { describe, expect, it } from 'vitest'
import { datesFor, describeMoment, knownTimeZone, localeFromHeader } from '../../app/utils/dates'
import { namingFields } from '../../app/utils/forms'
import { CreateApiKeyBody } from '#shared/utils/api-keys'

describe('the reader\'s dates', () => {
  it('takes the first locale of Accept-Language that Intl knows, else en-GB', () => {
    expect(localeFromHeader('de-DE,de;q=0.9,en;q=0.8')).toBe('de-DE')
    expect(localeFromHeader('*, fr;q=0.5')).toBe('fr')
    expect(localeFromHeader('')).toBe('en-GB')
    expect(localeFromHeader(undefined)).toBe('en-GB')
  })

  it('takes a known time zone, else UTC', () => {
    expect(knownTimeZone('Europe/Berlin')).toBe('Europe/Berlin')
    expect(knownTimeZone('Mars/Olympus')).toBe('UTC')
    expect(knownTimeZone(undefined)).toBe('UTC')
  })

  it('writes one moment in the reader\'s locale and time zone', () => {
    const moment = '2026-11-25T23:57:00Z'
    expect(datesFor({ locale: 'en-GB', timeZone: 'UTC' }).formatDateTime(moment)).toBe('25 Nov 2026, 23:57')
    expect(datesFor({ locale: 'en-US', timeZone: 'UTC' }).formatDateTime(moment)).toBe('Nov 25, 2026, 11:57 PM')
    expect(datesFor({ locale: 'en-GB', timeZone: 'Europe/Berlin' }).formatDateTime(moment)).toBe('26 Nov 2026, 00:57')
    expect(datesFor({ locale: 'de-DE', timeZone: 'UTC' }).formatDate(moment)).toBe('25.11.2026')
    // a calendar date is the same day in every time zone
    expect(datesFor({ locale: 'en-GB', timeZone: 'Pacific/Honolulu' }).formatCalendarDate('2026-11-25')).toBe('25 Nov 2026')
  })
})

describe('the one rule for a moment', () => {
  const reader = { locale: 'en-GB', timeZone: 'UTC' }
  const now = Date.parse('2026-11-27T12:00:00Z')
  const at = (offset: number) => new Date(now + offset).toISOString()
  const minutes = 60_000
  const hours = 60 * minutes

  it('is relative within a day, before or after now', () => {
    expect(describeMoment(reader, at(-20_000), now).text).toBe('now')
    expect(describeMoment(reader, at(-2 * minutes), now).text).toBe('2 minutes ago')
    expect(describeMoment(reader, at(-59 * minutes), now).text).toBe('59 minutes ago')
    expect(describeMoment(reader, at(-3 * hours - 5 * minutes), now).text).toBe('3 hours ago')
    expect(describeMoment(reader, at(23 * hours), now).text).toBe('in 23 hours')
    expect(describeMoment({ locale: 'de-DE', timeZone: 'UTC' }, at(-2 * minutes), now).text).toBe('vor 2 Minuten')
  })

  it('is the full date and time from a day away, and the full date and time on hover always', () => {
    expect(describeMoment(reader, at(-24 * hours), now)).toEqual({ iso: '2026-11-26T12:00:00.000Z', text: '26 Nov 2026, 12:00', title: '26 Nov 2026, 12:00' })
    expect(describeMoment(reader, at(3 * 24 * hours), now).text).toBe('30 Nov 2026, 12:00')
    expect(describeMoment({ locale: 'en-US', timeZone: 'America/New_York' }, '2026-11-20T15:30:00Z', now).text).toBe('Nov 20, 2026, 10:30 AM')
    expect(describeMoment(reader, at(-2 * minutes), now)).toEqual({ iso: '2026-11-27T11:58:00.000Z', text: '2 minutes ago', title: '27 Nov 2026, 11:58' })
  })
})

describe('form messages', () => {
  it('name their field', async () => {
    const result = await namingFields(CreateApiKeyBody.pick({ name: true }))['~standard'].validate({ name: '  ' })
    expect(result.issues?.map(issue => issue.message)).toEqual(['Name is required'])
  })
})
