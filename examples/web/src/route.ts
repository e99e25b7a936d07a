import { useEffect, useState } from 'react';

/** The page's routes, kept in the URL hash so a permalink is a plain link. */
export type Route =
  | { kind: 'home' }
  | { kind: 'conversation'; conversationId: string }
  | { kind: 'message'; conversationId: string; messageId: string }
  | { kind: 'search'; query: string }
  | { kind: 'starred' }
  | { kind: 'mentions' };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'c' && parts[1]) {
    if (parts[2] === 'm' && parts[3]) return { kind: 'message', conversationId: parts[1], messageId: parts[3] };
    return { kind: 'conversation', conversationId: parts[1] };
  }
  if (parts[0] === 'search' && parts[1]) return { kind: 'search', query: parts[1] };
  if (parts[0] === 'starred') return { kind: 'starred' };
  if (parts[0] === 'mentions') return { kind: 'mentions' };
  return { kind: 'home' };
}

export const hrefs = {
  conversation: (id: string) => `#/c/${encodeURIComponent(id)}`,
  message: (conversationId: string, messageId: string) => `#/c/${encodeURIComponent(conversationId)}/m/${encodeURIComponent(messageId)}`,
  search: (query: string) => `#/search/${encodeURIComponent(query)}`,
  starred: '#/starred',
  mentions: '#/mentions',
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
