import { Command } from 'commander';
import { clientAction } from '../command-options.js';
import { samplingFields, withGenerationOptions, type GenerationOptions } from '../generation-options.js';
import { forEachPrompt, interactive } from '../prompt-loop.js';
import { out } from '../terminal.js';

interface Message {
  role: string;
  content: string;
}

/** `hangar chat -u <uid>`: an interactive conversation; each line is a user turn, answers stream back. */
export function chatCommand(): Command {
  return withGenerationOptions(new Command('chat').description('chat with a running LLM (one line per turn; exit or Ctrl-D ends)'))
    .option('--system <prompt>', 'a system message to start the conversation with')
    .action(
      clientAction<GenerationOptions & { system?: string }>(async (http, options) => {
        const messages: Message[] = options.system ? [{ role: 'system', content: options.system }] : [];
        await forEachPrompt('User: ', async (line, signal) => {
          messages.push({ role: 'user', content: line });
          // An answer stopped by Ctrl-C leaves no turn behind: the next line starts afresh.
          signal.addEventListener('abort', () => messages.pop(), { once: true });
          const body = { model: options.modelUid, messages, ...samplingFields(options) };
          if (interactive()) out('Assistant: ');
          let answer = '';
          if (options.stream !== false) {
            for await (const chunk of http.stream('/v1/chat/completions', { ...body, stream: true }, signal)) {
              const delta = (chunk.choices as Array<{ delta?: { content?: string | null } }> | undefined)?.[0]?.delta?.content ?? '';
              answer += delta;
              out(delta);
            }
          } else {
            const reply = await http.post<{ choices: Array<{ message: { content: string | null } }> }>('/v1/chat/completions', body, signal);
            answer = reply.choices[0]?.message.content ?? '';
            out(answer);
          }
          out('\n');
          messages.push({ role: 'assistant', content: answer });
        });
      }),
    );
}
