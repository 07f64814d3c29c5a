// Anyone holding the token may see which team and role it offers; no session needed.
export default defineEventHandler(async (event) => {
  const token = getRouterParam(event, 'token') ?? ''
  return previewInvitation(await useDb(), token)
})
