// Request bodies above 1 MiB are refused before anything reads them.
const maxBodyBytes = 1024 * 1024

export default defineEventHandler((event) => {
  const length = Number(getRequestHeader(event, 'content-length') ?? 0)
  if (length > maxBodyBytes) {
    throw createError({ statusCode: 413, statusMessage: `The request body is larger than ${maxBodyBytes} bytes` })
  }
})
