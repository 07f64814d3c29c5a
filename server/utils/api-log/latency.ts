// Latency histograms of the usage rollups: requests counted per bucket of duration, so that p50 and
// p95 of any range are read from the summed buckets rather than from the raw entries.

/** The upper bounds (ms) of the buckets; a last bucket holds everything slower. */
export const latencyBounds = [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000] as const

/** The bucket of a duration. */
export function latencyBucket(ms: number): number {
  for (let i = 0; i < latencyBounds.length; i++) {
    if (ms <= latencyBounds[i]!) return i
  }
  return latencyBounds.length
}

/** An empty histogram. */
export function emptyHistogram(): number[] {
  return Array.from({ length: latencyBounds.length + 1 }, () => 0)
}

/** Adds `more` into `into`, bucket by bucket. */
export function addHistogram(into: number[], more: readonly number[]): void {
  for (let i = 0; i < more.length; i++) into[i] = (into[i] ?? 0) + (more[i] ?? 0)
}

/**
 * The q-quantile (0.5, 0.95) of a histogram, as the upper bound of the bucket it falls in (the
 * slowest bucket answers twice its lower bound); null with no requests.
 */
export function histogramQuantile(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0)
  if (!total) return null
  const rank = Math.ceil(total * q)
  let seen = 0
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!
    if (seen >= rank) return latencyBounds[i] ?? latencyBounds[latencyBounds.length - 1]! * 2
  }
  return null
}
