/** What `serve` prints about the demo, and what it preloads in Apollo Sandbox for it. */
import { conversationGlobalId, messageGlobalId } from '../history/globalId.ts';
import type { Demo, DemoOutcome } from './createDemo.ts';
import { DEMO_GROUP_MESSAGES, DEMO_USERS } from './demoTexts.ts';

/** The Sandbox document's variables: the demo group, and a message in its middle to jump to. */
export function demoSandboxVariables(demo: Demo): Record<string, string> {
  return {
    conversationId: conversationGlobalId(demo.groupId),
    messageId: messageGlobalId(demo.groupId, DEMO_GROUP_MESSAGES / 2),
  };
}

/**
 * The lines printed after "serving": what the demo holds, then each demo
 * user's token on an `Authorization: Bearer …` line of its own (to paste
 * into a client), `tokens` in the order of `DEMO_USERS`.
 */
export function demoBanner(demo: Exclude<DemoOutcome, { kind: 'none' }>, tokens: readonly string[], url: string): string {
  const group = conversationGlobalId(demo.groupId);
  const direct = conversationGlobalId(demo.directId);
  const lines = [
    '',
    demo.kind === 'created'
      ? `Created a demo (\`serve --no-demo\` skips it): ${DEMO_USERS.join(' and ')} share the group ${group} ` +
        `(${DEMO_GROUP_MESSAGES.toLocaleString('en')} messages, ${demo.revoked} revoked) and the direct conversation ${direct}.`
      : `The demo: group ${group}, direct conversation ${direct}.`,
    'Tokens, valid 30 days (`npx backscroll token <userId>` makes others):',
    ...DEMO_USERS.flatMap((user, i) => [
      `Token for user "${user}"${i === 0 ? ' (Apollo Sandbox uses this one)' : ''}:`,
      `Authorization: Bearer ${tokens[i]}`,
    ]),
    '',
    `Open ${url} in a browser for Apollo Sandbox.`,
  ];
  return `${lines.join('\n')}\n`;
}
