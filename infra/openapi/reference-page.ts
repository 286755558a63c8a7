import type { Json } from './document';

/** Where the local server serves the description and its reference page. */
export const DOCUMENT_PATH = '/openapi.json';
export const REFERENCE_PATH = '/docs';
export const REFERENCE_DOCUMENT_PATH = '/docs/openapi.json';
export const REFERENCE_SCRIPT_PATH = '/docs/scalar.js';

/**
 * The document as the reference page shows it. Scalar hides operations flagged `x-internal`, but
 * the page is where our own people read and try every route: internal operations stay listed,
 * marked with an "Internal" badge (and `x-internal-operation`), in a copy; /openapi.json keeps the flag.
 */
export function referencePageDocument(document: Json): Json {
  const copy = structuredClone(document) as Json;
  for (const item of Object.values(copy.paths as Record<string, Json>)) {
    for (const operation of Object.values(item) as Json[]) {
      const badges: Json[] = [];
      if (operation['x-internal']) {
        delete operation['x-internal'];
        operation['x-internal-operation'] = true;
        badges.push({ name: 'Internal', color: '#b45309' });
      }
      if (operation['x-extension']) badges.push({ name: 'Extension', color: '#1d4ed8' });
      if (badges.length > 0) operation['x-badges'] = badges;
    }
  }
  return copy;
}

/** The page: Scalar's standalone bundle from npm (served by us, no CDN); fonts, telemetry and hosted services off. */
export function referencePageHtml(title: string): string {
  const configuration = {
    url: REFERENCE_DOCUMENT_PATH,
    withDefaultFonts: false,
    telemetry: false,
    defaultOpenAllTags: true,
    showOperationId: true,
    hideDarkModeToggle: false,
    documentDownloadType: 'json',
    // Scalar's hosted services (AI agent, MCP, developer toolbar) would reach outside this machine.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    showToolbar: 'never',
    authentication: { preferredSecurityScheme: 'bearerAuth' },
    metaData: { title },
  };
  const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escaped(title)}</title>
<style>body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }</style>
</head>
<body>
<div id="app"></div>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
<script>Scalar.createApiReference('#app', ${JSON.stringify(configuration).replace(/</g, '\\u003c')});</script>
</body>
</html>
`;
}
