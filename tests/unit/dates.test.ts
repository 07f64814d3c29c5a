import { describe, expect, it } from 'vitest'
import { datesFor, knownTimeZone, localeFromHeader } from '../../app/utils/dates'
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

describe('form messages', () => {
  it('name their field', async () => {
    const result = await namingFields(CreateApiKeyBody.pick({ name: true }))['~standard'].validate({ name: '  ' })
    expect(result.issues?.map(issue => issue.message)).toEqual(['Name is required'])
  })
})
