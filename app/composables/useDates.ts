/**
 * The app's one date formatter, in the reader's locale and time zone. The server renders with the
 * locale of the request's Accept-Language and the time zone the browser left in the `tz` cookie
 * (UTC before its first visit); the browser takes over the same locale, and its own time zone.
 * `now` is the moment relative times are counted from: the server's render time, which the browser
 * hydrates with (so that "5 minutes ago" reads the same on both), then the browser's clock, kept
 * fresh every 30 s once a page has mounted (`keepNowFresh`).
 * Usage: `const { formatDateTime } = useDates()`.
 */
export function useDates() {
  const locale = useState('reader-locale', () => import.meta.server
    ? localeFromHeader(useRequestHeaders(['accept-language'])['accept-language'])
    : localeFromHeader(navigator.languages.join(',')))
  const timeZone = import.meta.server ? knownTimeZone(useCookie<string | undefined>(zoneCookieName).value) : browserTimeZone()
  const now = useState('dates-now', () => Date.now())
  return { ...datesFor({ locale: locale.value, timeZone }), now }
}

const zoneCookieName = 'tz'
let browserZone: string | undefined
/**
 * The browser's time zone, worked out once per page load and left in the `tz` cookie for the
 * server's next render. Once, not per call: every AppTime of a table asks, and each answer
 * (two Intl formatters, a cookie read and a cookie watcher) cost the phone's hydration dearly.
 */
function browserTimeZone(): string {
  if (browserZone) return browserZone
  browserZone = knownTimeZone(Intl.DateTimeFormat().resolvedOptions().timeZone)
  const cookie = document.cookie.split('; ').find(pair => pair.startsWith(`${zoneCookieName}=`))
  if (decodeURIComponent(cookie?.slice(zoneCookieName.length + 1) ?? '') !== browserZone) {
    document.cookie = `${zoneCookieName}=${encodeURIComponent(browserZone)}; Path=/; Max-Age=${60 * 60 * 24 * 365}; SameSite=Lax`
  }
  return browserZone
}

let ticking: ReturnType<typeof setInterval> | undefined
/** Moves `now` to the browser's clock, and every 30 s after (once for the whole app); call it in onMounted. */
export function keepNowFresh(now: Ref<number>) {
  now.value = Date.now()
  ticking ??= setInterval(() => {
    now.value = Date.now()
  }, 30_000)
}
