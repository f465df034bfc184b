// A modal on the native <dialog>: focus moves in and is trapped by the
// browser, Esc closes, and the heading names it for assistive technology.
import { useEffect, useId, useRef, type ReactNode } from 'react';

interface DialogProps {
  title: string;
  /** Esc, the close button and a backdrop click end here. */
  onClose(): void;
  children: ReactNode;
  /** Buttons under the body. */
  footer?: ReactNode;
  wide?: boolean;
  /** Names the dialog's role for tests and assistive technology (defaults to dialog). */
  role?: 'dialog' | 'alertdialog';
}

export function Dialog({ title, onClose, children, footer, wide = false, role = 'dialog' }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const closeRef = useRef(onClose);
  closeRef.current = onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return undefined;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    const cancel = (event: Event) => {
      event.preventDefault();
      closeRef.current();
    };
    dialog.addEventListener('cancel', cancel);
    return () => {
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      // Give focus back to what opened the dialog, if it is still there.
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      role={role}
      className={wide ? 'dialog dialog-wide' : 'dialog'}
      aria-labelledby={titleId}
      onMouseDown={(event) => {
        if (event.target === ref.current) closeRef.current();
      }}
    >
      <div className="dialog-frame">
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
        </header>
        <div className="dialog-body">{children}</div>
        {footer ? <footer className="dialog-footer">{footer}</footer> : null}
      </div>
    </dialog>
  );
}
