import { useEffect, useRef, useState } from 'react';

/**
 * Shows a new key once. The server keeps only a digest, so this dialog is the only
 * place the key can be copied from; closing it forgets the key.
 */
export function KeyCreatedDialog({ created, onClose }: { created: { id: number; key: string; name: string }; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  // Over plain http on another host than localhost the browser offers no clipboard: said
  // so, and the key is selected to copy by hand (Copy did nothing, without a word).
  const copy = async () => {
    if (!navigator.clipboard) {
      setCopied('no');
      document.querySelector<HTMLInputElement>('#key-created-value')?.select();
      return;
    }
    await navigator.clipboard.writeText(created.key).then(() => setCopied('yes'), () => setCopied('no'));
  };
  return (
    // Escape does not close it: the key would be gone for good with one key press.
    <dialog ref={ref} aria-labelledby="key-created-title" onCancel={(e) => e.preventDefault()}>
      <h2 id="key-created-title">Key {created.name} created</h2>
      <p>Copy it now. The server keeps only a digest of it and cannot show it again.</p>
      <input id="key-created-value" readOnly value={created.key} aria-label="The new API key" onFocus={(e) => e.currentTarget.select()} />
      {copied === 'no' && <p className="banner error">This page cannot use the clipboard (plain http on another host than localhost): the key is selected, copy it with Ctrl+C.</p>}
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="primary" onClick={onClose} autoFocus>
          I have copied it
        </button>
      </div>
    </dialog>
  );
}
