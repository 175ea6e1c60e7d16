// The document around each page the daemon serves (dashboard, admin, the
// pages servers answer browsers with): its inline style carries the
// response's CSP nonce, and it loads nothing from outside.

export function htmlPage(page: {
  title: string;
  nonce: string;
  style: string;
  body: string;
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<style nonce="${page.nonce}">${page.style}</style>
</head>
<body>
${page.body}
</body>
</html>
`;
}
