/** The chat panel and its launcher (rendered by main.tsx inside a shadow root). */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  fetchWidgetConfig,
  friendlyError,
  RequestError,
  sendFeedback,
  streamQuery,
  type Action,
  type Answer,
  type Source,
  type StreamHandlers,
  type WidgetConfig,
} from './api.ts';
import { ChatIcon, CloseIcon, NewIcon, ThumbDownIcon, ThumbUpIcon } from './icons.tsx';
import { citedNumbers, renderMarkdown, safeUrl, sanitizeSvg } from './markdown.ts';
import type { WidgetOptions } from './options.ts';
import { useTypedLength } from './typed-text.ts';
import { emptyConversation, loadConversation, loadOpen, saveConversation, saveOpen, type AssistantMessage, type Conversation, type Message } from './store.ts';
import { useVisualViewport } from './viewport.ts';

const FOCUSABLE = 'button:not([disabled]), a[href], textarea:not([disabled])';
/** No image hosts, one list for every render: answers' rendering is memoized on it. */
const NO_HOSTS: readonly string[] = [];
/** Pixels left above the newest question when the log stops following its answer. */
const ANCHOR_MARGIN = 8;

/** What the widget's events (`lore:handover`, `lore:event`) carry in `detail`. */
export type ActionEventDetail = Action['action'] & {
  actionId: string;
  label: string;
  experienceId: string;
  sessionId: string | undefined;
  queryId: string | undefined;
};

function ActionIcon({ icon }: { icon: Action['icon'] }) {
  if (!icon) return null;
  if (icon.type === 'emoji') return <span aria-hidden="true">{icon.content}</span>;
  if (icon.type === 'svg') return <span aria-hidden="true" dangerouslySetInnerHTML={{ __html: sanitizeSvg(icon.content) }} />;
  const src = safeUrl(icon.content);
  return src ? <img src={src} alt="" /> : null;
}

/** The assistant's avatar beside a message (decorative: the panel's heading names the assistant). */
function Avatar({ src }: { src: string | undefined }) {
  return src ? <img class="avatar" src={src} alt="" referrerpolicy="no-referrer" /> : null;
}

/** After a thumbs down: an optional comment, sent with the same rating. */
function CommentForm({ onSend }: { onSend(comment: string): Promise<void> }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  return (
    <form
      class="comment"
      onSubmit={async (event) => {
        event.preventDefault();
        setSending(true);
        await onSend(text.trim());
        setSending(false);
      }}
    >
      <textarea
        rows={2}
        maxLength={2000}
        aria-label="What was wrong? (optional)"
        placeholder="What was wrong? (optional)"
        value={text}
        onInput={(event) => {
          setText(event.currentTarget.value);
          // The field grows with the text (styles.ts); the conversation follows it, down to the Send button.
          event.currentTarget.form?.scrollIntoView({ block: 'nearest' });
        }}
      />
      <button type="submit" class="send" disabled={sending || text.trim() === ''}>
        Send
      </button>
    </form>
  );
}

type AssistantProps = {
  message: AssistantMessage;
  /** The avatar's https URL, when the experience has one. */
  avatar: string | undefined;
  /** Hosts whose https images the answer may show. */
  imageHosts: readonly string[];
  /** Called after the answer grew on screen, so that the log can follow it. */
  onGrow(): void;
  onAction(action: Action, queryId: string | undefined): void;
  onRate(message: AssistantMessage, rating: 'up' | 'down', comment?: string): Promise<void>;
};

/**
 * What an answer shows below its text: the sources it cites with `[n]` (an answer that cites none
 * used none), and the actions without the `open_url` buttons that only repeat a source's link.
 */
function shownParts(message: AssistantMessage): { sources: Source[]; actions: Action[] } {
  const cited = citedNumbers(message.text);
  const sources = message.sources.filter((source) => cited.has(source.number));
  const sourceUrls = new Set(message.sources.map((source) => safeUrl(source.url)).filter(Boolean));
  const actions = message.actions.filter((action) => action.action.type !== 'open_url' || !sourceUrls.has(safeUrl(action.action.url)));
  return { sources, actions };
}

function AssistantBubble({ message, avatar, imageHosts, onAction, onRate, onGrow }: AssistantProps) {
  const typed = useTypedLength(message.text, message.status === 'streaming');
  const text = message.text.slice(0, typed);
  const html = useMemo(() => renderMarkdown(text, message.sources, imageHosts), [text, message.sources, imageHosts]);
  const { sources, actions } = useMemo(() => shownParts(message), [message.text, message.sources, message.actions]);
  // From the question's sending until the last character is on screen: the answer is in progress.
  const writing = message.status === 'streaming' || typed < message.text.length;
  useLayoutEffect(onGrow, [typed, writing]);
  return (
    <article class={`message assistant${message.text === '' && message.error ? ' failed' : ''}`} aria-busy={writing} aria-label="Answer">
      <Avatar src={avatar} />
      {text !== '' && <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />}
      {writing && (
        <span class="typing" role="status" aria-label="The assistant is writing">
          <span />
          <span />
          <span />
        </span>
      )}
      {!writing && sources.length > 0 && (
        <ol class="sources" aria-label="Sources">
          {sources.map((source) => {
            const href = safeUrl(source.url);
            const label = source.title || source.url || `Source ${source.number}`;
            return (
              <li key={source.number} value={source.number} title={label}>
                <span class="source-number" aria-hidden="true">
                  {source.number}
                </span>
                {href ? (
                  <a href={href} target="_blank" rel="noopener noreferrer">
                    {label}
                  </a>
                ) : (
                  <span>{label}</span>
                )}
              </li>
            );
          })}
        </ol>
      )}
      {!writing && actions.length > 0 && (
        <div class="actions" role="group" aria-label="Suggested actions">
          {actions.map((action) => (
            <button key={action.id} type="button" class="action" onClick={() => onAction(action, message.queryId)}>
              <ActionIcon icon={action.icon} />
              {action.label}
            </button>
          ))}
        </div>
      )}
      {!writing && message.status === 'done' && message.queryId && (
        <div class="feedback" role="group" aria-label="Was this answer helpful?">
          <button type="button" class="icon-button" aria-label="Helpful" aria-pressed={message.rating === 'up'} onClick={() => onRate(message, 'up')}>
            <ThumbUpIcon />
          </button>
          <button type="button" class="icon-button" aria-label="Not helpful" aria-pressed={message.rating === 'down'} onClick={() => onRate(message, 'down')}>
            <ThumbDownIcon />
          </button>
        </div>
      )}
      {message.rating === 'down' &&
        (message.comment === undefined ? (
          <CommentForm onSend={(comment) => onRate(message, 'down', comment)} />
        ) : (
          <p class="thanks" role="status">
            Thanks, your comment was sent.
          </p>
        ))}
      {message.error && (
        <p class="error" role="alert">
          {message.error}
        </p>
      )}
    </article>
  );
}

function MessageView(props: { message: Message } & Omit<AssistantProps, 'message'>) {
  const { message } = props;
  if (message.role === 'user') {
    return (
      <div class="message user" aria-label="Your question">
        {message.text}
      </div>
    );
  }
  return <AssistantBubble {...props} message={message} />;
}

export function Widget({ options }: { options: WidgetOptions }) {
  // The visitor's last choice in this tab wins over data-open.
  const [open, setOpen] = useState(() => loadOpen(options.experienceId) ?? options.open);
  /** The experience's presentation: undefined until read, null when it could not be. */
  const [config, setConfig] = useState<WidgetConfig | null | undefined>(undefined);
  const configRequested = useRef(false);
  const [conversation, setConversation] = useState<Conversation>(() => loadConversation(options.experienceId, options.userId));
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const current = useRef(conversation);
  current.current = conversation;
  const nextId = useRef(conversation.messages.reduce((max, message) => Math.max(max, message.id), 0) + 1);
  const inFlight = useRef<AbortController | undefined>(undefined);
  // Focus follows the visitor's own opening and closing only; data-open must not steal focus on load.
  const moveFocus = useRef(false);
  const panel = useRef<HTMLDivElement>(null);
  const log = useRef<HTMLDivElement>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const launcher = useRef<HTMLButtonElement>(null);
  useVisualViewport(panel, open);

  // Read when the panel first opens, not at load: most page views never open it, and each read
  // is a request and a database read on the service. The heading shows data-title meanwhile.
  useEffect(() => {
    if (!open || configRequested.current) return;
    configRequested.current = true;
    // Without it the widget still answers: the question's own error line says what is wrong.
    fetchWidgetConfig(options).then(setConfig, () => setConfig(null));
  }, [open]);

  // Layout effects throughout: the saved conversation, the scroll and the focus follow a render in
  // the same task, never a frame later. A reload right after an answer keeps it.
  useLayoutEffect(() => saveConversation(options.experienceId, conversation), [conversation]);
  useLayoutEffect(() => follow(), [conversation.messages, open]);
  // Opening or closing moves the focus at once; a frame later would leave it on a hidden control.
  useLayoutEffect(() => {
    if (!moveFocus.current) return;
    moveFocus.current = false;
    (open ? field.current : launcher.current)?.focus();
  }, [open]);

  /**
   * Follows the newest answer while it fits under its question, then stops with the question at
   * the top of the view: an answer with five sources and six buttons is taller than the panel, and
   * scrolling to the bottom would hide its start. The scroll only moves down, so a visitor who
   * scrolled further into the answer is not pulled back.
   */
  function follow() {
    const element = log.current;
    if (!element) return;
    const bottom = element.scrollHeight - element.clientHeight;
    const questions = element.querySelectorAll<HTMLElement>('.message.user');
    const question = questions[questions.length - 1];
    let target = bottom;
    if (question) {
      const offset = (node: Element) => node.getBoundingClientRect().top - element.getBoundingClientRect().top + element.scrollTop;
      // A question taller than half the view would push the answer out: its first line is the anchor then.
      const answer = question.nextElementSibling;
      const anchor = answer && offset(answer) - offset(question) > element.clientHeight / 2 ? answer : question;
      target = Math.min(bottom, offset(anchor) - ANCHOR_MARGIN);
    }
    if (element.scrollTop < target) element.scrollTop = target;
  }

  const toggle = (next: boolean) => {
    moveFocus.current = true;
    saveOpen(options.experienceId, next);
    setOpen(next);
  };

  const updateAssistant = (id: number, change: (message: AssistantMessage) => Partial<AssistantMessage>) =>
    setConversation((previous) => ({
      ...previous,
      messages: previous.messages.map((message) => (message.id === id && message.role === 'assistant' ? { ...message, ...change(message) } : message)),
    }));

  async function ask(text: string) {
    const question = text.trim();
    if (!question || inFlight.current) return;
    const replyId = nextId.current + 1;
    nextId.current += 2;
    setConversation((previous) => ({
      ...previous,
      messages: [
        ...previous.messages,
        { id: replyId - 1, role: 'user', text: question },
        { id: replyId, role: 'assistant', text: '', status: 'streaming', sources: [], actions: [] },
      ],
    }));
    setInput('');
    setBusy(true);
    const controller = new AbortController();
    inFlight.current = controller;
    const handlers: StreamHandlers = {
      onMeta: (meta) => {
        updateAssistant(replyId, () => ({ queryId: meta.queryId }));
        setConversation((previous) => ({ ...previous, sessionId: meta.sessionId }));
      },
      onDelta: (delta) => updateAssistant(replyId, (message) => ({ text: message.text + delta })),
      onSources: (sources) => updateAssistant(replyId, () => ({ sources })),
      onActions: (actions) => updateAssistant(replyId, () => ({ actions })),
    };
    const sessionId = current.current.sessionId;
    try {
      let answer: Answer;
      try {
        answer = await streamQuery(options, { text: question, sessionId }, handlers, controller.signal);
      } catch (error) {
        // The stored session is gone (404) or was completed by an operator (409): carry on in a new one.
        const stale = sessionId && error instanceof RequestError && (error.status === 404 || error.status === 409);
        if (!stale) throw error;
        answer = await streamQuery(options, { text: question, sessionId: undefined }, handlers, controller.signal);
      }
      updateAssistant(replyId, () => ({ text: answer.answer, queryId: answer.queryId, sources: answer.sources, actions: answer.actions, status: 'done' }));
      setConversation((previous) => ({ ...previous, sessionId: answer.sessionId }));
    } catch (error) {
      if (controller.signal.aborted) return;
      updateAssistant(replyId, () => ({ status: 'error', error: friendlyError(error) }));
    } finally {
      if (inFlight.current === controller) {
        inFlight.current = undefined;
        setBusy(false);
      }
    }
  }

  function startOver() {
    inFlight.current?.abort();
    inFlight.current = undefined;
    setBusy(false);
    setConversation(emptyConversation(options.userId));
    field.current?.focus();
  }

  function runAction(action: Action, queryId: string | undefined) {
    const { type } = action.action;
    if (type === 'open_url') {
      const href = safeUrl(action.action.url);
      if (!href) return;
      if (action.action.target === '_self') location.assign(href);
      else window.open(href, '_blank', 'noopener');
    } else if (type === 'send_query') {
      if (action.action.query) void ask(action.action.query);
    } else {
      const detail: ActionEventDetail = {
        ...action.action,
        actionId: action.id,
        label: action.label,
        experienceId: options.experienceId,
        sessionId: current.current.sessionId,
        queryId,
      };
      window.dispatchEvent(new CustomEvent(type === 'trigger_handover' ? 'lore:handover' : 'lore:event', { detail }));
    }
  }

  async function rate(message: AssistantMessage, rating: 'up' | 'down', comment?: string) {
    if (!message.queryId) return;
    try {
      await sendFeedback(options, message.queryId, rating, comment);
      updateAssistant(message.id, () => ({ rating, comment, error: undefined }));
    } catch (error) {
      updateAssistant(message.id, () => ({ error: friendlyError(error) }));
    }
  }

  /** Escape closes; Tab and Shift+Tab cycle inside the open panel (a focus trap). */
  function onPanelKey(event: KeyboardEvent) {
    if (event.key === 'Escape') {
      event.preventDefault();
      toggle(false);
      return;
    }
    if (event.key !== 'Tab' || !panel.current) return;
    const focusable = Array.from(panel.current.querySelectorAll<HTMLElement>(FOCUSABLE));
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    const active = (panel.current.getRootNode() as ShadowRoot).activeElement;
    if (event.shiftKey && active === first) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && active === last) {
      event.preventDefault();
      first?.focus();
    }
  }

  function onFieldKey(event: KeyboardEvent) {
    // Enter sends, Shift+Enter is a new line; Enter that confirms an IME composition is neither.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void ask(input);
    }
  }

  /** The panel's button for the experience's handover: what its button under an answer does. */
  function handOver(handover: NonNullable<WidgetConfig['handover']>) {
    const { actionId, label, agentType } = handover;
    const answered = conversation.messages.filter((message): message is AssistantMessage => message.role === 'assistant' && message.queryId !== undefined);
    runAction({ id: actionId, label, action: agentType ? { type: 'trigger_handover', agentType } : { type: 'trigger_handover' } }, answered[answered.length - 1]?.queryId);
  }

  const avatar = safeUrl(config?.avatarUrl);
  const imageHosts = config?.imageHosts ?? NO_HOSTS;
  const starters = conversation.messages.length === 0 ? (config?.starterQuestions ?? []) : [];
  const titleId = 'lore-title';
  return (
    <div
      class={`root ${options.theme}${open ? ' open' : ''}${avatar ? ' with-avatar' : ''}`}
      style={options.accentColor ? { '--accent': options.accentColor } : undefined}
    >
      <div
        ref={panel}
        id="lore-panel"
        class="panel"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        hidden={!open}
        onKeyDown={onPanelKey}
      >
        <div class="header">
          <h2 id={titleId}>{config?.assistantName ?? options.title}</h2>
          {config?.handover && (
            <button type="button" class="action handover" title={config.handover.label} onClick={() => handOver(config.handover!)}>
              {config.handover.label}
            </button>
          )}
          <button type="button" class="icon-button" aria-label="New conversation" title="New conversation" onClick={startOver}>
            <NewIcon />
          </button>
          <button type="button" class="icon-button" aria-label="Close chat" title="Close" onClick={() => toggle(false)}>
            <CloseIcon />
          </button>
        </div>
        <div ref={log} class="log" role="log" aria-live="polite" aria-label="Conversation">
          {config?.greeting ? (
            <div class="message assistant greeting">
              <Avatar src={avatar} />
              {config.greeting}
            </div>
          ) : (
            conversation.messages.length === 0 && config !== undefined && <p class="empty">Ask a question to get started.</p>
          )}
          {starters.length > 0 && (
            <div class="actions starters" role="group" aria-label="Suggested questions">
              {starters.map((question) => (
                <button key={question} type="button" class="action" onClick={() => void ask(question)}>
                  {question}
                </button>
              ))}
            </div>
          )}
          {conversation.messages.map((message) => (
            <MessageView
              key={message.id}
              message={message}
              avatar={avatar}
              imageHosts={imageHosts}
              onAction={runAction}
              onRate={rate}
              onGrow={follow}
            />
          ))}
        </div>
        <form
          class="composer"
          onSubmit={(event) => {
            event.preventDefault();
            void ask(input);
          }}
        >
          <label class="visually-hidden" for="lore-question">
            Your question
          </label>
          <textarea
            ref={field}
            id="lore-question"
            rows={1}
            maxLength={4000}
            placeholder={options.placeholder}
            value={input}
            onInput={(event) => setInput(event.currentTarget.value)}
            onKeyDown={onFieldKey}
          />
          <button type="submit" class="send" disabled={busy || input.trim() === ''}>
            Send
          </button>
        </form>
      </div>
      <button
        ref={launcher}
        type="button"
        class="launcher"
        aria-label={open ? 'Close chat' : 'Open chat'}
        aria-expanded={open}
        aria-controls="lore-panel"
        onClick={() => toggle(!open)}
      >
        {open ? <CloseIcon /> : <ChatIcon />}
      </button>
    </div>
  );
}
