import { InvalidInput } from '../invalid-input.js';
import { SCHEMA_LIMITS } from './grammar-schema.js';

/**
 * A client's GBNF grammar (the `grammar` field) held to the sizes a JSON schema is
 * (grammar-schema.ts, SCHEMA_LIMITS): at most 1,000 alternatives (`|` outside strings,
 * character classes and comments) and 120,000 characters. llama.cpp's grammar takes time
 * that grows with the square of its alternatives, in llama-server's own loop, where every
 * request of the model waits; a grammar a JSON schema of that size would make fits.
 */
export function checkGrammarSize(text: string): void {
  if (text.length > SCHEMA_LIMITS.characters) {
    throw new InvalidInput(`grammar: the grammar has ${text.length} characters, more than the ${SCHEMA_LIMITS.characters} a llama.cpp grammar takes here`);
  }
  const alternatives = countAlternatives(text);
  if (alternatives > SCHEMA_LIMITS.alternatives) {
    throw new InvalidInput(`grammar: the grammar has ${alternatives} alternatives (|), more than the ${SCHEMA_LIMITS.alternatives} a llama.cpp grammar takes here`);
  }
}

function countAlternatives(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '|') count++;
    else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '"' || c === '[') {
      const close = c === '"' ? '"' : ']';
      for (i++; i < text.length && text[i] !== close; i++) if (text[i] === '\\') i++;
    }
  }
  return count;
}
