// A self-contained reference page rendered from the OpenAPI document: no CDN,
// no script, so it works in air-gapped installations and behind strict CSPs.

const escape = (value: unknown) =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

// The parts of the OpenAPI document the page reads.
type Content = Record<string, { schema?: unknown }>;
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown; description?: string }[];
  requestBody?: { content: Content };
  responses?: Record<string, { $ref?: string; description?: string; content?: Content }>;
};
type Doc = {
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses?: Record<string, { description?: string }> };
};

/** Escaped JSON whose `$ref`s to named schemas are links to their section. */
function linkedJson(value: unknown, indent?: number) {
  return escape(JSON.stringify(value, null, indent)).replace(
    /&quot;#\/components\/schemas\/([A-Za-z0-9_.-]+)&quot;/g,
    (_match, name: string) => `<a href="#schema-${name}">${name}</a>`,
  );
}

function schemaBlock(schema: unknown) {
  return `<pre>${linkedJson(schema, 2)}</pre>`;
}

/** The descriptions are Markdown; the page renders the part they use: `code` and line breaks. */
function prose(text: string | undefined) {
  return escape(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\n/g, '<br>');
}

export function renderDocsPage(doc: Doc): string {
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const byTag = new Map<string, typeof operations>();
  for (const entry of operations) {
    const tag = entry.op.tags?.[0] ?? 'Other';
    byTag.set(tag, [...(byTag.get(tag) ?? []), entry]);
  }
  const nav = [...byTag.entries()]
    .map(([tag, ops]) => `<li><b>${escape(tag)}</b><ul>${ops.map(({ method, path, op }) => `<li><a href="#${escape(op.operationId)}"><code>${method.toUpperCase()} ${escape(path)}</code></a></li>`).join('')}</ul></li>`)
    .join('');
  const sections = operations
    .map(({ path, method, op }) => {
      const params = op.parameters ?? [];
      const responses = Object.entries(op.responses ?? {});
      return `<section id="${escape(op.operationId)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(doc.servers[0]?.url ?? '')}${escape(path)}</code></h3>
<p><b>${escape(op.summary)}</b></p><p>${prose(op.description)}</p>
${params.length ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>${params.map((p) => `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${linkedJson(p.schema)}</code></td><td>${prose(p.description)}</td></tr>`).join('')}</table>` : ''}
${op.requestBody ? `<h4>Request body</h4>${Object.entries(op.requestBody.content).map(([type, c]) => `<p><code>${escape(type)}</code></p>${schemaBlock(c.schema)}`).join('')}` : ''}
<h4>Responses</h4><table><tr><th>status</th><th>description</th><th>body</th></tr>${responses
        .map(([status, r]) => {
          const ref = r.$ref ? String(r.$ref).split('/').pop() : undefined;
          const content = r.content ? Object.entries(r.content).map(([type, c]) => `<code>${escape(type)}</code> ${linkedJson(c.schema)}`).join('<br>') : ref ? '<code>application/problem+json</code> <a href="#schema-Problem">Problem</a>' : '';
          const description = r.description ?? (ref ? doc.components.responses?.[ref]?.description : undefined);
          return `<tr><td>${escape(status)}</td><td>${prose(description)}</td><td>${content}</td></tr>`;
        })
        .join('')}</table>
</section>`;
    })
    .join('\n');
  const schemas = Object.entries(doc.components.schemas)
    .map(([name, schema]) => `<section id="schema-${escape(name)}"><h3>${escape(name)}</h3>${schemaBlock(schema)}</section>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)} reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:0;display:flex;color:#1d2330}
nav{width:300px;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6fa;padding:1rem;font-size:.85rem;box-sizing:border-box}
nav ul{list-style:none;padding-left:.5rem}main{flex:1;padding:1rem 2rem;max-width:1000px}
section{border-bottom:1px solid #dde;padding-bottom:1rem}pre{background:#f4f6fa;padding:.5rem;overflow:auto;font-size:.8rem}
table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #dde;padding:.25rem .5rem;text-align:left;vertical-align:top}
.m{color:#fff;padding:.1rem .4rem;border-radius:3px;font-size:.8rem}.get{background:#2f7d32}.post{background:#1565c0}.patch{background:#b26a00}.delete{background:#b71c1c}.put{background:#6a1b9a}
</style></head><body>
<nav><p><b>${escape(doc.info.title)}</b> ${escape(doc.info.version)}</p><p><a href="openapi.json">openapi.json</a></p><ul>${nav}</ul><p><a href="#schemas">Schemas</a></p></nav>
<main><h1>${escape(doc.info.title)}</h1><p>${prose(doc.info.description)}</p>
<h2>Operations</h2>${sections}<h2 id="schemas">Schemas</h2>${schemas}</main></body></html>`;
}
