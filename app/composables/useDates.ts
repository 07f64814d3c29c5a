/**
 * The app's one date formatter, in the reader's locale and time zone. The server renders with the
 * locale of the request's Accept-Language and the time zone the browser left in the `tz` cookie
 * (UTC before its first visit); the browser takes over the same locale, and its own time zone.
 * Usage: `const { formatDateTime } = useDates()`.
 */
export function useDates() {
  const locale = useState('reader-locale', () => import.meta.server
    ? localeFromHeader(useRequestHeaders(['accept-language'])['accept-language'])
    : localeFromHeader(navigator.languages.join(',')))
  const zoneCookie = useCookie<string | undefined>('tz', { sameSite: 'lax', maxAge: 60 * 60 * 24 * 365 })
  const timeZone = import.meta.server ? knownTimeZone(zoneCookie.value) : knownTimeZone(Intl.DateTimeFormat().resolvedOptions().timeZone)
  if (import.meta.client && zoneCookie.value !== timeZone) zoneCookie.value = timeZone
  return datesFor({ locale: locale.value, timeZone })
}
