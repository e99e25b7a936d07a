/** What a composed text mentions: the `mentionUserIds` and `mentionEveryone` of its `sendMessage`. */
export interface ComposedMentions {
  /** Members named by an `@<user id>` token, in the order first named, each once. */
  userIds: string[];
  /** Whether an `@everyone` token is in the text. */
  everyone: boolean;
}

// `@` starts a token only at the start or after a character that cannot be
// part of a name, so an address such as `ann@example.com` names no one.
const TOKEN = /(?<![\w@])@([^\s@]+)/g;
// A sentence may end right after a name: "thanks, @bob."
const TRAILING_PUNCTUATION = /[.,;:!?)\]'"]+$/;

/**
 * The mentions in `text`: `@everyone`, and `@<id>` for each id of
 * `memberIds` (the server refuses anyone else, so other tokens stay plain
 * text). A member whose id is `everyone` cannot be named this way.
 */
export function mentionsIn(text: string, memberIds: readonly string[]): ComposedMentions {
  const members = new Set(memberIds);
  const userIds: string[] = [];
  let everyone = false;
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[1]!;
    const name = members.has(raw) ? raw : raw.replace(TRAILING_PUNCTUATION, '');
    if (name === 'everyone') everyone = true;
    else if (members.has(name) && !userIds.includes(name)) userIds.push(name);
  }
  return { userIds, everyone };
}
