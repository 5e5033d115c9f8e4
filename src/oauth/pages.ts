/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Headers of every OAuth HTML page: never cached (they carry a CSRF token or an authorization
 * request), never framed (RFC 6749 §10.13 clickjacking), no scripts, no referrer to other sites.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // same-origin: the form posts keep their Origin (checked at sign-in), other sites never see the query
  'Referrer-Policy': 'same-origin',
};

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:.6rem 0}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin-right:.5rem}.error{color:#a00}ul{list-style:none;padding:0}li{margin:.3rem 0}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/** The sign-in form shown by the authorize endpoint without a session; posts to `action` and comes back to `returnTo`. */
export function signInPage(options: { action: string; returnTo: string; clientName?: string; error?: string; username?: string }): string {
  const intro = options.clientName
    ? `<p><strong>${escapeHtml(options.clientName)}</strong> asks for access to your account. Sign in first.</p>`
    : '<p>Sign in to continue.</p>';
  return layout(
    'Sign in',
    `${intro}
${options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : ''}
<form method="post" action="${escapeHtml(options.action)}">
${hidden({ return_to: options.returnTo })}
<label>Username <input type="text" name="username" autocomplete="username" required value="${escapeHtml(options.username ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

/**
 * The sign-in form's second step for an account with two-factor authentication on
 * (docs/authentication.md#two-factor-authentication-totp): a code of the authenticator app or a
 * recovery code, posted to `action` with the password step's `challenge`, coming back to `returnTo`.
 */
export function totpCodePage(options: { action: string; returnTo: string; challenge: string; error?: string }): string {
  return layout(
    'Two-factor authentication',
    `<p>Enter the 6-digit code your authenticator app shows, or one of your recovery codes.</p>
${options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : ''}
<form method="post" action="${escapeHtml(options.action)}">
${hidden({ return_to: options.returnTo, challenge: options.challenge })}
<label>Code <input type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="11" required autofocus></label>
<button type="submit">Verify</button>
</form>`,
  );
}

/**
 * The consent page: names the client, the signed-in user and each requested scope (each a
 * checkbox, all checked, described by `describeScope`), with Approve and Deny. The authorization request travels in hidden
 * fields (validated again on submit) with the session's CSRF token.
 */
export function consentPage(options: {
  action: string;
  clientName: string;
  username: string;
  scopes: string[];
  describeScope: (scope: string) => string;
  params: Record<string, string | undefined>;
  csrfToken: string;
}): string {
  const scopes = options.scopes
    .map(
      (scope) =>
        `<li><label><input type="checkbox" name="grant_scope" value="${escapeHtml(scope)}" checked> <code>${escapeHtml(scope)}</code>: ${escapeHtml(options.describeScope(scope))}</label></li>`,
    )
    .join('\n');
  return layout(
    `Authorize ${options.clientName}`,
    `<p><strong>${escapeHtml(options.clientName)}</strong> wants to act on your behalf as <strong>${escapeHtml(options.username)}</strong>, with these permissions:</p>
<form method="post" action="${escapeHtml(options.action)}">
${hidden({ ...options.params, csrf_token: options.csrfToken })}
<ul>
${scopes}
</ul>
<p>It never sees your password. You can revoke its access at any time (<code>DELETE /v1/oauth-grants/{id}</code>).</p>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** An error page of the authorize endpoint: shown instead of redirecting (no open redirector, RFC 6749 §4.1.2.1). */
export function errorPage(title: string, message: string, link?: { href: string; text: string }): string {
  return layout(
    title,
    `<p class="error" role="alert">${escapeHtml(message)}</p>${link ? `\n<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : ''}`,
  );
}
