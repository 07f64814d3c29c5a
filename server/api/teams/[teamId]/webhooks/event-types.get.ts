export default defineEventHandler(async (event) => {
  await authUser(event, 'webhooks.view')
  return { event_types: await subscribableEventTypes() }
})
