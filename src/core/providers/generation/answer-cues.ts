/**
 * What kind of statement answers a question. "What is the default port?" is answered by a
 * sentence that states a number, "Which option ...?" by one that names an identifier, and a
 * sentence that merely repeats the question's words (a setting's heading line) is not the answer.
 * Each cue is a question pattern and the feature of a sentence that fulfils it.
 */
type Cue = { asks: RegExp; states: RegExp };

// An identifier as documentation writes one: a code span, snake_case, camelCase or dotted names,
// a command-line flag.
const IDENTIFIER = /`[^`]+`|\b[A-Za-z]+_[A-Za-z0-9_]+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Za-z]+\.[A-Za-z_]+\b|(?:^|\s)--?[A-Za-z][\w-]*/;

const CUES: Cue[] = [
  // A quantity: a number, a size, a duration, a port, a limit.
  {
    asks: /\b(how (many|much|long|large|big|small|often|far|old)|(largest|smallest|biggest|highest|lowest|maximum|minimum|max|min) (number|size|value|length|amount)|which (port|level|version)|what (port|level|size|version))\b/i,
    // A digit that starts a number, not one inside a name ("IMAP4", "b64encode").
    states: /(?<![\p{L}\d_])\d/u,
  },
  // A default: the sentence that says what happens when nothing is set.
  { asks: /\b(default|by default|if i don't|without (specifying|passing|setting|changing)|when i don't|if not set|unless)\b/i, states: /\bdefault|\bif (omitted|not (given|specified|set))|\b(is|are) (omitted|not (given|specified|set|passed))\b|\bunless\b/i },
  // A name: which function, option, exception, command...
  {
    asks: /\b(which|what) (\w+ ){0,3}(function|method|module|class|option|flag|switch|argument|parameter|attribute|variable|setting|command|keyword|encoding|decorator|syntax|format|type|name|exception|error|code)s?\b/i,
    states: IDENTIFIER,
  },
  // An exception: the sentence that names one.
  { asks: /\b(exception|error)s?\b.*\b(raise[sd]?|thrown?|get)\b|\b(raise[sd]?|thrown?)\b.*\b(exception|error)s?\b/i, states: /\b\w+(Error|Exception|Warning|Exit)\b/ },
  // A procedure: how to do something is answered by what to call, pass or run.
  { asks: /\b(how (do|can|should|would) (i|we|you)|how to|is there a way|what should i use)\b/i, states: IDENTIFIER },
];

/** The sentence features that would answer `question`. */
export function answerCues(question: string): RegExp[] {
  return CUES.filter((cue) => cue.asks.test(question)).map((cue) => cue.states);
}

/** How many of `cues` a sentence fulfils. */
export function cuesMet(sentence: string, cues: readonly RegExp[]): number {
  return cues.filter((cue) => cue.test(sentence)).length;
}
