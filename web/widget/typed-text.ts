/**
 * Streamed answers type in. The service sends what the generator gives it: a word at a time from
 * the openai generator, a whole sentence (often 200 characters or more) at a time from the
 * extractive one, which would otherwise appear in jumps with pauses between. The text on screen
 * catches up with the text received a few characters per frame.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Each frame shows this share of what is still hidden, so any backlog is on screen within about a
 * second (1,000 characters: 55 frames at 60 Hz), and a word-by-word stream keeps its own pace.
 */
const CATCH_UP_FRAMES = 12;
/** Characters per frame at the least (120 a second at 60 Hz): the tail of a backlog does not crawl. */
const MIN_STEP = 2;

/**
 * How many characters of `text` to show. A message that was not streaming when it was first
 * rendered (one restored after a reload) shows at once; so does everything when the visitor asks
 * for reduced motion.
 */
export function useTypedLength(text: string, streaming: boolean): number {
  const [shown, setShown] = useState(() => (streaming ? 0 : text.length));
  const current = useRef(shown);
  current.current = shown;
  useEffect(() => {
    if (shown >= text.length) return undefined;
    if (matchMedia('(prefers-reduced-motion: reduce)').matches) {
      setShown(text.length);
      return undefined;
    }
    const frame = requestAnimationFrame(() => {
      const hidden = text.length - current.current;
      setShown(Math.min(text.length, current.current + Math.max(MIN_STEP, Math.ceil(hidden / CATCH_UP_FRAMES))));
    });
    return () => cancelAnimationFrame(frame);
  }, [text, shown]);
  // A text replaced by a shorter one (never the case for a stream) shows as it is.
  return Math.min(shown, text.length);
}
