import { splitHeld } from './holdback.js';

/**
 * Reasoning models think aloud between tags (`<think>` ... `</think>`) before
 * answering; that part goes out as `reasoning_content`, the answer as `text` (the
 * Python runtime's reasoning.py). The reasoning either opens the reply or the chat
 * template already opened it at the end of the prompt.
 */
export class ReasoningSplitter {
  private state: 'opening' | 'reasoning' | 'answer';
  private held = '';
  // The blank lines around the tags are layout, not content.
  private trimReasoning = true;
  private trimAnswer = true;

  constructor(private readonly start: string, private readonly end: string, startsInside: boolean) {
    this.state = startsInside ? 'reasoning' : 'opening';
  }

  /** [reasoning, answer]: the parts of the text so far that are safe to hand out. */
  feed(piece: string): [string, string] {
    let text = this.held + piece;
    this.held = '';
    let reasoning = '';
    if (this.state === 'opening') {
      const stripped = text.trimStart();
      if (stripped.startsWith(this.start)) {
        this.state = 'reasoning';
        text = stripped.slice(this.start.length);
      } else if (this.start.startsWith(stripped)) {
        this.held = text; // blank so far, or part of the tag: wait
        return ['', ''];
      } else {
        this.state = 'answer';
        this.trimAnswer = false; // no reasoning: the reply is the answer as written
      }
    }
    if (this.state === 'reasoning') {
      const cut = text.indexOf(this.end);
      if (cut < 0) {
        [reasoning, this.held] = splitHeld(text, [this.end]);
        return [this.trimmedReasoning(reasoning), ''];
      }
      reasoning = this.trimmedReasoning(text.slice(0, cut));
      text = text.slice(cut + this.end.length);
      this.state = 'answer';
    }
    return [reasoning, this.trimmedAnswer(text)];
  }

  /** What was held: reasoning cut off by the token limit stays reasoning. */
  finish(): [string, string] {
    const held = this.held;
    this.held = '';
    return this.state === 'reasoning' ? [this.trimmedReasoning(held), ''] : ['', this.trimmedAnswer(held)];
  }

  private trimmedReasoning(text: string): string {
    if (this.trimReasoning) {
      text = text.trimStart();
      this.trimReasoning = text.length === 0;
    }
    return text;
  }

  private trimmedAnswer(text: string): string {
    if (this.trimAnswer) {
      text = text.trimStart();
      this.trimAnswer = text.length === 0;
    }
    return text;
  }
}
