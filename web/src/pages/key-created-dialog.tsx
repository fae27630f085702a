import { useEffect, useRef, useState } from 'react';

/**
 * Shows a new key once. The server keeps only a digest, so this dialog is the only
 * place the key can be copied from; closing it forgets the key.
 */
export function KeyCreatedDialog({ created, onClose }: { created: { id: number; key: string; name: string }; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const copy = async () => {
    await navigator.clipboard?.writeText(created.key).then(() => setCopied(true), () => setCopied(false));
  };
  return (
    <dialog ref={ref} aria-labelledby="key-created-title" onCancel={onClose}>
      <h2 id="key-created-title">Key {created.name} created</h2>
      <p>Copy it now. The server keeps only a digest of it and cannot show it again.</p>
      <input readOnly value={created.key} aria-label="The new API key" onFocus={(e) => e.currentTarget.select()} />
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="primary" onClick={onClose} autoFocus>
          I have copied it
        </button>
      </div>
    </dialog>
  );
}
