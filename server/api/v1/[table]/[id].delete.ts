export default definePublicApiHandler(event => answerApiRequest(event, 'deleteOne'))
