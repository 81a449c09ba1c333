import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { api, setCsrfToken } from './api.js';
import { onLinkClick, usePath, navigate } from './router.js';
import { SignIn, Setup, AddPasskey } from './pages/sign-in.js';
import { Overview } from './pages/overview.js';
import { Verifications } from './pages/verifications.js';
import { Clients } from './pages/clients.js';
import { ClientDetail } from './pages/client-detail.js';
import { Fraud } from './pages/fraud.js';
import { Providers } from './pages/providers.js';
import { Audit } from './pages/audit.js';
import { AccountPage } from './pages/account.js';

interface Operator {
  readonly id: string;
  readonly email: string;
}

const pages = [
  { path: '/console', label: 'Overview' },
  { path: '/console/verifications', label: 'Verifications' },
  { path: '/console/clients', label: 'Clients' },
  { path: '/console/fraud', label: 'Fraud' },
  { path: '/console/providers', label: 'Providers' },
  { path: '/console/audit', label: 'Audit log' },
] as const;

function Page({ path }: { path: string }) {
  const client = /^\/console\/clients\/([0-9a-f-]{36})$/.exec(path);
  if (client?.[1]) return <ClientDetail id={client[1]} />;
  switch (path) {
    case '/console/verifications':
      return <Verifications />;
    case '/console/clients':
      return <Clients />;
    case '/console/fraud':
      return <Fraud />;
    case '/console/providers':
      return <Providers />;
    case '/console/audit':
      return <Audit />;
    case '/console/passkey':
      return <AddPasskey />;
    case '/console/account':
      return <AccountPage />;
    default:
      return <Overview />;
  }
}

function App() {
  const path = usePath();
  const [operator, setOperator] = useState<Operator | null | undefined>(undefined);
  const main = useRef<HTMLElement>(null);

  useEffect(() => {
    api<{ operator: Operator; csrfToken: string }>('GET', '/session').then(
      (s) => {
        setCsrfToken(s.csrfToken);
        setOperator(s.operator);
      },
      () => setOperator(null),
    );
  }, []);
  // After a move (or a sign-in), keyboard and screen-reader users start at the new page's heading; on the first
  // load the browser's own order holds (the skip link first).
  const previous = useRef<Operator | null | undefined>(undefined);
  useEffect(() => {
    const firstLoad = previous.current === undefined;
    previous.current = operator;
    if (!firstLoad) main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path, operator]);

  const signedIn = (s: { operator: Operator; csrfToken: string }) => {
    setCsrfToken(s.csrfToken);
    setOperator(s.operator);
  };
  if (operator === undefined) return <main id="main"><p>Loading…</p></main>;
  if (path === '/console/setup') {
    return (
      <main id="main" ref={main}>
        <Setup onSignedIn={(s) => { signedIn(s); }} />
      </main>
    );
  }
  if (operator === null) {
    return (
      <main id="main" ref={main}>
        <SignIn onSignedIn={signedIn} />
      </main>
    );
  }
  const signOut = async () => {
    await api('POST', '/sign-out', {});
    setCsrfToken(null);
    setOperator(null);
    navigate('/console');
  };
  const current = pages.find((p) => p.path !== '/console' && path.startsWith(p.path))?.path ?? (path === '/console' ? '/console' : null);
  return (
    <>
      <a class="skip" href="#main">Skip to the page</a>
      <header>
        <span class="brand">otp-service console</span>
        <nav aria-label="Console">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <a href={p.path} onClick={onLinkClick} aria-current={current === p.path ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <a href="/console/account" onClick={onLinkClick} aria-current={path === '/console/account' ? 'page' : undefined}>{operator.email}<span class="visually-hidden"> (your account)</span></a>
          <a href="/console/passkey" onClick={onLinkClick}>Add a passkey</a>
          <button type="button" onClick={signOut}>Sign out</button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
