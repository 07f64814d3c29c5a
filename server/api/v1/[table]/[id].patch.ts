export default definePublicApiHandler(event => answerApiRequest(event, 'updateOne'))
