// The console session starts here: `login(email, password)`, token kept in
// sessionStorage by the caller.
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { LoginDocument } from '../gql/graphql';
import { graphqlClient } from '../lib/graphql-client';
import { useI18n } from '../lib/i18n';
import type { MessageKey } from '../lib/messages';
import { LanguageSwitch } from '../components/language-switch';

interface LoginPageProps {
  notice: MessageKey | null;
  onSignedIn(token: string): void;
}

export function LoginPage({ notice, onSignedIn }: LoginPageProps) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { login } = await graphqlClient(null)(LoginDocument, { email: email.trim(), password });
      onSignedIn(login.token);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <div className="login-screen">
      <div className="login-lang">
        <LanguageSwitch />
      </div>
      <main className="login-card">
        <div className="brand brand-large" aria-hidden="true">
          TSXT
        </div>
        <h1>{t('login.title')}</h1>
        {notice ? (
          <p className="alert alert-info" role="status">
            {t(notice)}
          </p>
        ) : null}
        <ErrorBanner error={error} />
        <form onSubmit={(event) => void submit(event)} className="form-grid">
          <div className="field">
            <label htmlFor="login-email">{t('login.email')}</label>
            <input
              id="login-email"
              type="email"
              name="email"
              autoComplete="username"
              required
              autoFocus
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="login-password">{t('login.password')}</label>
            <input
              id="login-password"
              type="password"
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </div>
          <button type="submit" className="button button-primary button-block" disabled={busy}>
            {busy ? t('login.submitting') : t('login.submit')}
          </button>
        </form>
      </main>
    </div>
  );
}
