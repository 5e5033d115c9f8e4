import { describe, expect, it } from '@jest/globals';
import { escapeHtml } from './pages.js';
import { redirectUriProblem } from './redirect-uri.js';

describe('redirectUriProblem (RFC 9700 §2.1: redirect URIs registered for exact matching)', () => {
  it.each(['https://app.example/cb', 'https://app.example:8443/oauth/cb?tenant=1', 'http://localhost:3000/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb'])(
    'accepts %s',
    (uri) => {
      expect(redirectUriProblem(uri)).toBeNull();
    },
  );

  it.each([
    ['http://app.example/cb', /https/],
    ['https://app.example/cb#frag', /fragment/],
    ['/cb', /absolute/],
    ['https://app.example/a/../cb', /dot segments/],
    ['https://app.example/./cb', /dot segments/],
    ['https://app.example/a/%2e%2e/cb', /dot segments/],
    ['https://*.app.example/cb', /wildcards/],
    ['https://app.example/c b', /whitespace/],
    ['https://user:pw@app.example/cb', /user information/],
    ['javascript:alert(1)', /https/],
    ['ftp://app.example/cb', /https/],
    [`https://app.example/${'a'.repeat(2000)}`, /2000/],
  ])('refuses %s', (uri, problem) => {
    expect(redirectUriProblem(uri)).toMatch(problem);
  });
});

describe('escapeHtml', () => {
  it('escapes every character that could open markup or leave an attribute', () => {
    expect(escapeHtml(`<script>alert("x") & 'y' \`z\`</script>`)).toBe('&#60;script&#62;alert(&#34;x&#34;) &#38; &#39;y&#39; &#96;z&#96;&#60;/script&#62;');
  });
});
