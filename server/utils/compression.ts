import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

export type ContentCoding = 'br' | 'gzip'

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const minCompressBytes = 1024

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/**
 * The coding to answer with for an Accept-Encoding header: brotli, else gzip, else none.
 * A coding with `q=0` is refused; `*` accepts both.
 */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentCoding | null {
  if (!acceptEncoding) return null
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';')
    const q = params.map(p => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
    if (name) accepted.set(name.trim(), q === undefined ? 1 : Number(q))
  }
  const quality = (coding: ContentCoding) => accepted.get(coding) ?? accepted.get('*') ?? 0
  if (quality('br') > 0) return 'br'
  if (quality('gzip') > 0) return 'gzip'
  return null
}

/** Compresses a body with a coding; brotli at a middle quality, since answers are compressed per request. */
export function compressBody(body: string | Buffer, coding: ContentCoding): Promise<Buffer> {
  if (coding === 'br') {
    return brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body),
      },
    })
  }
  return gzipAsync(body, { level: 6 })
}
