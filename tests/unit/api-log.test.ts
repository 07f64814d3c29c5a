import { describe, expect, it } from 'vitest'
import { addHistogram, emptyHistogram, histogramQuantile, latencyBounds, latencyBucket } from '../../server/utils/api-log/latency'
import { newRequestId, requestIdTime } from '../../server/utils/api-log/request-id'
import { apiLogQuery, emptyApiLogFilters } from '../../app/utils/api-log'

describe('request ids', () => {
  it('are req_ and 26 characters of [0-9A-Za-z], unique, ordered by time, and say when they were made', () => {
    const before = Date.now()
    const made = Array.from({ length: 2000 }, () => newRequestId())
    const after = Date.now()
    for (const { id, at } of made) {
      expect(id).toMatch(/^req_[0-9A-Za-z]{26}$/)
      expect(requestIdTime(id)).toBe(at)
      expect(at).toBeGreaterThanOrEqual(before)
      expect(at).toBeLessThanOrEqual(after)
    }
    const ids = made.map(({ id }) => id)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
  })

  it('another string has no time', () => {
    for (const id of ['', 'req_', 'req_0000', 'abc_01M8ASY67A7RFXB9AE9536N28Q', 'req_01M8ASY67A7RFXB9AE9536N28q', `req_${'Z'.repeat(26)}`]) {
      expect(requestIdTime(id)).toBeUndefined()
    }
  })
})

describe('latency histograms', () => {
  it('put a duration in the first bucket whose bound holds it, and the slowest past the last bound', () => {
    expect(latencyBucket(0.2)).toBe(0)
    expect(latencyBucket(1)).toBe(0)
    expect(latencyBucket(1.01)).toBe(1)
    expect(latencyBucket(100)).toBe(latencyBounds.indexOf(100))
    expect(latencyBucket(60_000)).toBe(latencyBounds.length)
  })

  it('answer p50 and p95 as the bound of the bucket they fall in, null without requests', () => {
    const histogram = emptyHistogram()
    expect(histogramQuantile(histogram, 0.5)).toBeNull()
    // 90 requests of 4 ms, 10 of 120 ms
    addHistogram(histogram, Object.assign(emptyHistogram(), { [latencyBucket(4)]: 90, [latencyBucket(120)]: 10 }))
    expect(histogramQuantile(histogram, 0.5)).toBe(5)
    expect(histogramQuantile(histogram, 0.95)).toBe(150)
    addHistogram(histogram, Object.assign(emptyHistogram(), { [latencyBounds.length]: 900 }))
    expect(histogramQuantile(histogram, 0.95)).toBe(20_000)
  })
})

describe('the browser\'s log query', () => {
  it('names only the filters set, and the key of a key\'s page', () => {
    expect(apiLogQuery(emptyApiLogFilters)).toBe('')
    expect(apiLogQuery({ ...emptyApiLogFilters, status: '4xx', method: 'POST', request_id: ' req_1 ' }, 'k1')).toBe('api_key_id=k1&status=4xx&method=POST&request_id=req_1')
  })
})
