import { splitHeld } from './holdback.js';
import { makeCall, type ToolCall } from './tool-call-markup.js';

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const END = '<|end|>';
// End-of-generation tokens (a reply stops at them, so they are rarely in the text).
const CALL = '<|call|>';
const RETURN = '<|return|>';
const ENDS = [END, CALL, RETURN, START];
const MARKERS = [START, CHANNEL, MESSAGE, END, CALL, RETURN];

/**
 * gpt-oss's harmony format (docs/registry.md, "Tool parsers"): the reply is messages,
 * each a header (`<|channel|>analysis`, perhaps `to=functions.NAME` and
 * `<|constrain|>json`) then `<|message|>` and a body up to `<|end|>`, `<|call|>` or
 * `<|return|>`; the next one opens with `<|start|>assistant`. The `analysis` channel is
 * reasoning, `final` (and `commentary` without a recipient, the user-visible preamble)
 * is the answer, and a body addressed `to=functions.NAME` is a call's JSON arguments.
 * Other recipients (the built-in `browser.*`, `python`) are not functions: dropped.
 * Streams: reasoning and answer go out as they come, calls at the end. A reply that does
 * not open with a harmony header (its special tokens not kept) is passed on as answer.
 */
export class HarmonyText {
  private state: 'header' | 'body' | 'plain' = 'header';
  private header = '';
  private held = '';
  private channel = '';
  private recipient: string | null = null;
  private args = '';
  private readonly calls: ToolCall[] = [];

  /** [reasoning, answer] that may go out now. */
  feed(piece: string): [string, string] {
    let text = this.held + piece;
    this.held = '';
    let thought = '';
    let answer = '';
    while (text) {
      if (this.state === 'plain') {
        answer += text;
        break;
      }
      if (this.state === 'header') {
        this.header += text;
        text = '';
        const at = this.header.indexOf(MESSAGE);
        if (at < 0) {
          // Not harmony at all: the model's text is the answer.
          const opening = this.header.trimStart();
          if (opening && !opening.startsWith('<|') && !'<|'.startsWith(opening)) {
            this.state = 'plain';
            answer += this.header;
            this.header = '';
          }
          break;
        }
        this.openMessage(this.header.slice(0, at));
        text = this.header.slice(at + MESSAGE.length);
        this.header = '';
        continue;
      }
      // body: up to the first end marker, holding back what may be the start of one
      const ends = ENDS.map((m) => [text.indexOf(m), m] as const).filter(([i]) => i >= 0).sort((a, b) => a[0] - b[0]);
      if (ends.length === 0) {
        const [safe, rest] = splitHeld(text, MARKERS);
        this.held = rest;
        [thought, answer] = this.route(safe, thought, answer);
        break;
      }
      const [at, marker] = ends[0]!;
      [thought, answer] = this.route(text.slice(0, at), thought, answer);
      this.closeMessage();
      // `<|start|>` opens the next header itself; the others end the message.
      text = marker === START ? text.slice(at) : text.slice(at + marker.length);
      this.state = 'header';
    }
    return [thought, answer];
  }

  /** [reasoning, answer, calls] once the reply is whole. */
  finish(): [string, string, ToolCall[]] {
    let thought = '';
    let answer = '';
    const rest = this.held;
    this.held = '';
    if (this.state === 'body') {
      [thought, answer] = this.route(rest, thought, answer);
      this.closeMessage();
    } else if (this.state === 'plain') {
      answer = rest;
    } else if (this.header && !this.header.trimStart().startsWith('<|')) {
      answer = this.header;
    }
    this.header = '';
    return [thought, answer, this.calls];
  }

  private openMessage(header: string): void {
    this.channel = /<\|channel\|>\s*([A-Za-z_]+)/.exec(header)?.[1] ?? '';
    this.recipient = /\bto=([^\s<]+)/.exec(header)?.[1] ?? null;
    this.args = '';
    this.state = 'body';
  }

  private closeMessage(): void {
    if (this.recipient?.startsWith('functions.')) {
      const name = this.recipient.slice('functions.'.length);
      const body = this.args.trim();
      let args: unknown = body;
      try {
        args = JSON.parse(body);
      } catch {
        // Not JSON (a truncated reply): the arguments go out as the model wrote them.
      }
      if (name) this.calls.push(makeCall(name, args));
    }
    this.recipient = null;
    this.channel = '';
  }

  private route(text: string, thought: string, answer: string): [string, string] {
    if (!text) return [thought, answer];
    if (this.recipient !== null) {
      if (this.recipient.startsWith('functions.')) this.args += text;
      return [thought, answer];
    }
    if (this.channel === 'analysis') return [thought + text, answer];
    return [thought, answer + text];
  }
}
