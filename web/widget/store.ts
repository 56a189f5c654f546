/**
 * The conversation kept in localStorage per experience, so a reload continues it: the session id
 * (which the server needs to keep the context) and the messages shown (which the widget cannot
 * fetch back: reading a session needs a token with sessions:read).
 */
import type { Action, Source } from './api.ts';

export type UserMessage = { id: number; role: 'user'; text: string };
export type AssistantMessage = {
  id: number;
  role: 'assistant';
  text: string;
  status: 'streaming' | 'done' | 'error';
  queryId?: string;
  sources: Source[];
  actions: Action[];
  error?: string;
  rating?: 'up' | 'down';
  /** The comment sent with a thumbs down (its form shows until one is sent). */
  comment?: string;
};
export type Message = UserMessage | AssistantMessage;

export type Conversation = {
  sessionId: string | undefined;
  /** The data-user-id the session was started for: another visitor gets a conversation of their own. */
  userId: string | undefined;
  messages: Message[];
};

/** Enough to scroll back through a conversation without letting storage grow without bound. */
const MAX_MESSAGES = 60;

const storageKey = (experienceId: string) => `lore-widget:${experienceId}`;

export function emptyConversation(userId: string | undefined): Conversation {
  return { sessionId: undefined, userId, messages: [] };
}

/** The stored conversation, or an empty one (also when storage is unavailable or holds garbage). */
export function loadConversation(experienceId: string, userId: string | undefined): Conversation {
  try {
    const stored = JSON.parse(localStorage.getItem(storageKey(experienceId)) ?? 'null') as Conversation | null;
    if (!stored || !Array.isArray(stored.messages) || stored.userId !== userId) return emptyConversation(userId);
    return stored;
  } catch {
    return emptyConversation(userId);
  }
}

/** Stores the conversation; answers still streaming and failed ones are not kept. */
export function saveConversation(experienceId: string, conversation: Conversation): void {
  const messages = conversation.messages.filter((message) => message.role === 'user' || message.status === 'done').slice(-MAX_MESSAGES);
  try {
    localStorage.setItem(storageKey(experienceId), JSON.stringify({ ...conversation, messages }));
  } catch {
    // Storage full or blocked (private mode, sandboxed frame): the conversation lasts until reload.
  }
}

const openKey = (experienceId: string) => `lore-widget-open:${experienceId}`;

/**
 * Whether the panel was open in this tab before a reload or a navigation to another page of the
 * site: sessionStorage, so a new tab or tomorrow's visit starts with the launcher, as data-open
 * says. Undefined when this tab has not opened or closed it yet.
 */
export function loadOpen(experienceId: string): boolean | undefined {
  try {
    const stored = sessionStorage.getItem(openKey(experienceId));
    return stored === null ? undefined : stored === 'true';
  } catch {
    return undefined;
  }
}

export function saveOpen(experienceId: string, open: boolean): void {
  try {
    sessionStorage.setItem(openKey(experienceId), String(open));
  } catch {
    // Blocked storage: the panel starts as data-open says after a reload.
  }
}
