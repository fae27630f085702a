import { describe, expect, it } from 'vitest';
import { editedDefinition, emptyForm, fromDefinition, toDefinition } from '../../web/src/pages/register-definition.js';

// The web UI's register form and the definition it sends (web/src/pages/register-definition.ts).
describe('the register form\'s chat template', () => {
  it('sends a template for a family that is not built in, none (the family\'s) when empty, and an edit can clear one', () => {
    const form = { ...emptyForm('LLM'), model_name: 'mine', model_family: 'my-family', chat_template: '{{ messages[0].content }}', specs: [{ model_format: 'pytorch', model_size_in_billions: '1', quantization: 'none', model_uri: '/m' }] };
    expect(toDefinition('LLM', form)).toMatchObject({ model_family: 'my-family', chat_template: '{{ messages[0].content }}' });
    expect(toDefinition('LLM', { ...form, chat_template: '  ' }).chat_template).toBeNull();
    const stored = { ...toDefinition('LLM', form), stop: ['<|end|>'] };
    const loaded = fromDefinition('LLM', stored);
    expect(loaded.chat_template).toBe('{{ messages[0].content }}');
    // Cleared in the form: null goes to the server, the stop words the form does not show stay.
    expect(editedDefinition('LLM', { ...loaded, chat_template: '' }, stored)).toMatchObject({ chat_template: null, stop: ['<|end|>'] });
    expect(editedDefinition('LLM', loaded, stored)).toMatchObject({ chat_template: '{{ messages[0].content }}' });
  });
});
