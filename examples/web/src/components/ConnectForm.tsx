/** Asks for the server URL and a token (`npx backscroll token <userId>`), then puts them in the page URL. */
export function ConnectForm({ server }: { server: string }) {
  return (
    <form className="connect" method="get">
      <h1>backscroll web example</h1>
      <label>
        GraphQL URL
        <input name="server" defaultValue={server} size={40} />
      </label>
      <label>
        Token (<code>npx backscroll token &lt;userId&gt;</code>)
        <input name="token" required size={40} />
      </label>
      <button type="submit">Connect</button>
    </form>
  );
}
