// The one way the app writes a moment, in the reader's locale and time zone: useDates() gives the
// formatters (pages and components), AppTime shows a moment in a table or a sentence.

/** Whose dates: a locale (BCP 47) and an IANA time zone. */
export interface Reader {
  locale: string
  timeZone: string
}

/** The first locale of an Accept-Language header that Intl knows, else "en-GB". */
export function localeFromHeader(header: string | undefined): string {
  for (const part of (header ?? '').split(',')) {
    const tag = part.split(';')[0]!.trim()
    if (tag && tag !== '*' && isKnownLocale(tag)) return tag
  }
  return 'en-GB'
}

function isKnownLocale(tag: string): boolean {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([tag]).length > 0
  }
  catch {
    return false
  }
}

/** A time zone Intl knows, else UTC. */
export function knownTimeZone(zone: string | undefined): string {
  if (!zone) return 'UTC'
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return zone
  }
  catch {
    return 'UTC'
  }
}

const formats = new Map<string, Intl.DateTimeFormat>()
function formatter(reader: Reader, style: 'date' | 'datetime' | 'day'): Intl.DateTimeFormat {
  const id = `${reader.locale}|${reader.timeZone}|${style}`
  let format = formats.get(id)
  if (!format) {
    const options: Intl.DateTimeFormatOptions = style === 'date'
      ? { dateStyle: 'medium' }
      : style === 'datetime' ? { dateStyle: 'medium', timeStyle: 'short' } : { month: 'short', day: 'numeric' }
    format = new Intl.DateTimeFormat(reader.locale, { ...options, timeZone: style === 'day' ? 'UTC' : reader.timeZone })
    formats.set(id, format)
  }
  return format
}

/** The formatters of one reader. */
export function datesFor(reader: Reader) {
  return {
    reader,
    /** A calendar date, e.g. "22 Nov 2026" (en-GB) or "Nov 22, 2026" (en-US). */
    formatDate: (value: string | Date) => formatter(reader, 'date').format(new Date(value)),
    /** A date with its time of day, e.g. "22 Nov 2026, 14:05". */
    formatDateTime: (value: string | Date) => formatter(reader, 'datetime').format(new Date(value)),
    /** A day of a chart or a date column ("2026-11-22", no time zone), e.g. "22 Nov". */
    formatDay: (day: string) => formatter(reader, 'day').format(new Date(`${day.slice(0, 10)}T00:00:00Z`)),
    /** A calendar date column ("2026-11-22"), e.g. "22 Nov 2026", the same day in every time zone. */
    formatCalendarDate: (day: string) => new Intl.DateTimeFormat(reader.locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${day.slice(0, 10)}T00:00:00Z`)),
  }
}
