/** Whether the chat list slide-over (below the large breakpoint) is open. */
export const useChatListOpen = () => useState('chat:list-open', () => false)
