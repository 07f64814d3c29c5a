// The one way the app writes a moment, in the reader's locale and time zone: useDates() gives the
// formatters (pages and components), AppTime shows a moment in a table or a sentence by the one
// rule of describeMoment (relative within a day, else the full date and time; the full date and
// time on hover).

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

const relativeFormats = new Map<string, Intl.RelativeTimeFormat>()
function relativeFormatter(locale: string): Intl.RelativeTimeFormat {
  let format = relativeFormats.get(locale)
  if (!format) {
    format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' })
    relativeFormats.set(locale, format)
  }
  return format
}

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

/** A moment as the app shows it: `text` on the page, `title` on hover, `iso` for `<time datetime>`. */
export interface Moment {
  iso: string
  text: string
  title: string
}

/**
 * The app's one rule for a moment: within a day of `now` (before or after) relative ("now",
 * "5 minutes ago", "in 3 hours"), else the full date and time ("25 Nov 2026, 23:57"); the full
 * date and time on hover in every case.
 */
export function describeMoment(reader: Reader, value: string | Date, now: number): Moment {
  const at = new Date(value)
  const full = formatter(reader, 'datetime').format(at)
  const difference = at.getTime() - now
  const distance = Math.abs(difference)
  let text = full
  if (distance < minute) text = relativeFormatter(reader.locale).format(0, 'second')
  else if (distance < hour) text = relativeFormatter(reader.locale).format(Math.trunc(difference / minute), 'minute')
  else if (distance < day) text = relativeFormatter(reader.locale).format(Math.trunc(difference / hour), 'hour')
  return { iso: at.toISOString(), text, title: full }
}

/** The formatters of one reader. */
export function datesFor(reader: Reader) {
  return {
    reader,
    /** A moment by the app's one rule (describeMoment), as of `now`. */
    formatMoment: (value: string | Date, now: number) => describeMoment(reader, value, now),
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
