// The console shell: signed out → login; signed in → header, navigation and
// the API key page. The session token lives in sessionStorage (this tab only).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ErrorBanner } from './components/error-banner';
import { LanguageSwitch } from './components/language-switch';
import { ConsoleContextDocument, LogoutDocument } from './gql/graphql';
import { graphqlClient, isSessionError, type GraphqlRequest } from './lib/graphql-client';
import { useI18n } from './lib/i18n';
import type { MessageKey } from './lib/messages';
import { useAsync } from './lib/use-async';
import { KeysPage } from './keys/keys-page';
import { LoginPage } from './login/login-page';

const TOKEN_KEY = 'tsxt.console.session';

function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function App() {
  const [token, setToken] = useState<string | null>(storedToken);
  const [notice, setNotice] = useState<MessageKey | null>(null);

  const signIn = useCallback((next: string) => {
    try {
      sessionStorage.setItem(TOKEN_KEY, next);
    } catch {
      // Without storage the session lasts until the page is reloaded.
    }
    setNotice(null);
    setToken(next);
  }, []);

  const signOut = useCallback((reason: MessageKey) => {
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      // nothing stored
    }
    setNotice(reason);
    setToken(null);
  }, []);

  if (token === null) return <LoginPage notice={notice} onSignedIn={signIn} />;
  return <ConsoleShell key={token} token={token} onSignOut={signOut} />;
}

function ConsoleShell({ token, onSignOut }: { token: string; onSignOut(reason: MessageKey): void }) {
  const { t } = useI18n();
  const request = useMemo<GraphqlRequest>(() => graphqlClient(token), [token]);
  const context = useAsync(() => request(ConsoleContextDocument), [request]);

  /** Ends the session when an error says it is gone; true when it did. */
  const onSessionError = useCallback(
    (error: unknown) => {
      if (!isSessionError(error)) return false;
      onSignOut('login.expired');
      return true;
    },
    [onSignOut],
  );
  useEffect(() => {
    if (context.error) onSessionError(context.error);
  }, [context.error, onSessionError]);

  const logout = async () => {
    try {
      await request(LogoutDocument);
    } catch {
      // The token is dropped either way.
    }
    onSignOut('login.loggedOut');
  };

  const viewer = context.data?.viewer;
  const canMutate = viewer !== undefined && viewer.role !== 'viewer';
  const roleKey = viewer ? (`app.role.${viewer.role}` as MessageKey) : null;

  return (
    <div className="shell">
      <header className="topbar">
        <div className="brand">TSXT</div>
        <span className="topbar-title">{t('app.name')}</span>
        <div className="topbar-spacer" />
        {viewer ? (
          <span className="topbar-user">
            <span className="muted">{viewer.account.name}</span>
            <span>{viewer.email}</span>
            <span className="badge badge-role">{roleKey ? t(roleKey) : viewer.role}</span>
          </span>
        ) : null}
        <LanguageSwitch />
        <button type="button" className="button button-ghost" onClick={() => void logout()}>
          {t('app.logout')}
        </button>
      </header>
      <div className="layout">
        <nav className="sidebar" aria-label={t('nav.label')}>
          <div className="sidebar-group">{t('nav.access')}</div>
          <a className="sidebar-link active" href={import.meta.env.BASE_URL} aria-current="page">
            {t('nav.apiKeys')}
          </a>
        </nav>
        <main className="content">
          {context.error ? (
            <div>
              <ErrorBanner error={context.error} />
              <button type="button" className="button" onClick={context.reload}>
                {t('app.retry')}
              </button>
            </div>
          ) : !context.data ? (
            <p className="muted">{t('app.loading')}</p>
          ) : (
            <>
              {!canMutate ? (
                <p className="alert alert-info" role="status">
                  {t('app.viewerNotice')}
                </p>
              ) : null}
              <KeysPage
                request={request}
                models={context.data.models}
                canMutate={canMutate}
                month={context.data.creditStatus.month}
                hasCreditLimit={context.data.creditStatus.creditLimit !== null}
                onSessionError={onSessionError}
              />
            </>
          )}
        </main>
      </div>
    </div>
  );
}
