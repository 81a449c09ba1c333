import { useEffect, useState } from 'preact/hooks';

/** The console's pages live under /console; the server answers every one of them with the same page. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener('popstate', onPop);
    addEventListener('console-navigate', onPop);
    return () => {
      removeEventListener('popstate', onPop);
      removeEventListener('console-navigate', onPop);
    };
  }, []);
  return path;
}

export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new Event('console-navigate'));
}

/** A link that moves within the console without a reload (and works as a plain link with a modifier key). */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!a || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(a.getAttribute('href') ?? '/console');
}
