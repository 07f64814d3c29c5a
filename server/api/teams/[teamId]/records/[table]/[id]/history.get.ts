// The history of one record, for whoever may view the record (not only those who see the whole log).
export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'view')
  const id = requireRecordId(event, table)
  const page = readValidQuery(event, RecordHistoryQuery)
  return listActivity(client, { ...page, table: table.name, record_id: id })
})
