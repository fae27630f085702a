import { Command } from 'commander';
import { clientAction } from '../command-options.js';
import { samplingFields, withGenerationOptions, type GenerationOptions } from '../generation-options.js';
import { forEachPrompt } from '../prompt-loop.js';
import { out } from '../terminal.js';

/** `hangar generate -u <uid>`: each line read is a prompt; its completion is printed. */
export function generateCommand(): Command {
  return withGenerationOptions(new Command('generate').description('complete prompts with a running LLM (one prompt per line; exit or Ctrl-D ends)')).action(
    clientAction<GenerationOptions>(async (http, options) => {
      await forEachPrompt('Prompt: ', async (prompt, signal) => {
        const body = { model: options.modelUid, prompt, ...samplingFields(options) };
        if (options.stream !== false) {
          for await (const chunk of http.stream('/v1/completions', { ...body, stream: true }, signal)) {
            out((chunk.choices as Array<{ text?: string }> | undefined)?.[0]?.text ?? '');
          }
        } else {
          const reply = await http.post<{ choices: Array<{ text: string }> }>('/v1/completions', body, signal);
          out(reply.choices[0]?.text ?? '');
        }
        out('\n');
      });
    }),
  );
}
