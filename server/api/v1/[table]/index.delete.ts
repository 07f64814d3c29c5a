export default definePublicApiHandler(event => answerApiRequest(event, 'delete'))
