/** Generated titles are at most this long: about a line in a result list. */
export const generatedTitleLength = 120;

const fence = /^ {0,3}(`{3,}|~{3,})/;
const atxHeading = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const setextUnderline = /^ {0,3}(?:=+|-+)[ \t]*$/;
const notProse = /^ {0,3}(?:\||<!--|[-*_](?:[ \t]*[-*_]){2,}[ \t]*$)/;
const blockPrefix = /^ {0,3}(?:>[ \t]?)*(?:[-+*][ \t]+|\d{1,9}[.)][ \t]+)?/;

/** Markdown inline syntax reduced to its text: links and images to their labels, emphasis and escapes removed. */
export function plainInline(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/<[^>]*>/g, ' ')
    .replace(/(^|[^\w\\])(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\2(?!\w)/g, '$1$3')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~<])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Cuts text to at most `maxLength` characters at a word boundary, ending with an ellipsis when
 * something was cut. A single word longer than the limit is cut inside the word.
 */
export function shortenText(text: string, maxLength = generatedTitleLength): string {
  if (text.length <= maxLength) return text;
  let cut = text.slice(0, maxLength - 1);
  const lastSpace = cut.lastIndexOf(' ');
  // Below half the limit a word boundary costs more of the title than a cut word would.
  if (lastSpace >= maxLength / 2) cut = cut.slice(0, lastSpace);
  return `${cut.replace(/[\s,;:.-]+$/, '')}…`;
}

type Scan = { heading: string | undefined; paragraph: string | undefined };

/** The first heading (ATX or setext) and the first prose paragraph outside code fences. */
function scan(content: string): Scan {
  let heading: string | undefined;
  let paragraph: string | undefined;
  let fenceMarker: string | undefined;
  let lines: string[] = [];
  const closeParagraph = () => {
    const text = plainInline(lines.join(' '));
    if (paragraph === undefined && text !== '') paragraph = text;
    lines = [];
  };
  for (const line of content.split('\n')) {
    const fenceMatch = fence.exec(line);
    if (fenceMarker !== undefined) {
      if (fenceMatch && fenceMatch[1]!.startsWith(fenceMarker)) fenceMarker = undefined;
      continue;
    }
    if (fenceMatch) {
      closeParagraph();
      fenceMarker = fenceMatch[1];
      continue;
    }
    const atx = atxHeading.exec(line);
    if (atx) {
      closeParagraph();
      heading = plainInline(atx[1] ?? '') || undefined;
      if (heading !== undefined) break;
      continue;
    }
    if (setextUnderline.test(line) && lines.length > 0) {
      heading = plainInline(lines.join(' ')) || undefined;
      if (heading !== undefined) break;
      lines = [];
      continue;
    }
    if (line.trim() === '' || notProse.test(line)) {
      closeParagraph();
      continue;
    }
    lines.push(line.replace(blockPrefix, ''));
  }
  closeParagraph();
  return { heading, paragraph };
}

/** The first sentence of a paragraph, without a closing period and a leading `Q:`. */
function firstSentence(paragraph: string): string {
  const text = paragraph.replace(/^(?:q|question)\s*[:.]\s+/i, '');
  const sentence = /^.+?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;
  return sentence.replace(/(?<!\.)\.$/, '').trim();
}

/** The first Markdown heading of the content (outside code fences), cut like a generated title; undefined when it has none. */
export function firstHeading(content: string): string | undefined {
  const { heading } = scan(content);
  return heading === undefined ? undefined : shortenText(heading);
}

/**
 * A title for content that has none: its first Markdown heading, else the first sentence of its
 * first paragraph, else its first words (code, a table), else `fallback` (the record id); cut to
 * 120 characters at a word boundary with an ellipsis.
 */
export function deriveTitle(content: string, fallback = 'Untitled'): string {
  const { heading, paragraph } = scan(content);
  const candidate = heading ?? ((paragraph === undefined ? '' : firstSentence(paragraph)) || firstWords(content));
  return shortenText(candidate || fallback.trim() || 'Untitled');
}

/** The text of content that has no prose: fence lines, table pipes and delimiter rows removed. */
function firstWords(content: string): string {
  return content
    .replace(/^ {0,3}(?:`{3,}|~{3,}).*$/gm, '')
    .replace(/^[\s|:-]+$/gm, '')
    .replaceAll('|', ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
