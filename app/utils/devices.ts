// How the account's sessions and security log name a browser: "Firefox on Windows" from its
// user agent, the common browsers and systems only (anything else keeps a plain name).

const browsers: [RegExp, string][] = [
  [/\bEdgA?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bCriOS\//, 'Chrome'],
  [/\bHeadlessChrome\//, 'Headless Chrome'],
  [/\bChrom(e|ium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node|\bundici\b/i, 'Node.js'],
]

const systems: [RegExp, string][] = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** "Chrome on macOS", "Safari on iOS", "Unknown device" (no user agent), or the agent's first word. */
export function describeDevice(userAgent: string | null | undefined): string {
  const agent = userAgent?.trim()
  if (!agent) return 'Unknown device'
  const browser = browsers.find(([pattern]) => pattern.test(agent))?.[1]
  const system = systems.find(([pattern]) => pattern.test(agent))?.[1]
  if (browser && system) return `${browser} on ${system}`
  if (browser) return browser
  if (system) return `A browser on ${system}`
  return agent.split(/[\s/]/)[0]!.slice(0, 40) || 'Unknown device'
}
