// Validates Kubernetes objects (a YAML stream on stdin, e.g. `kubectl kustomize k8s/overlays/local`)
// against the Kubernetes OpenAPI schemas, through the models of the npm package kubernetes-models
// (ESM only, hence this script beside the jest test). Prints a JSON array of
// { kind, name, error } (error null when valid); an object without a schema is an error.
import { parseAllDocuments } from 'yaml';

const input = await new Promise((resolve) => {
  const chunks = [];
  process.stdin.on('data', (chunk) => chunks.push(chunk));
  process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
});

const results = [];
for (const doc of parseAllDocuments(input)) {
  const object = doc.toJS();
  if (!object) continue;
  const { apiVersion = '', kind = '', metadata = {} } = object;
  const entry = { apiVersion, kind, name: metadata.name ?? null, error: null };
  try {
    // core/v1 lives at kubernetes-models/v1, everything else at kubernetes-models/<group>/<version>.
    const models = await import(`kubernetes-models/${apiVersion}`);
    const Model = models[kind];
    if (typeof Model !== 'function') throw new Error(`no schema for ${apiVersion} ${kind}`);
    // kustomize wraps long base64 values of a Secret's data over several lines, which the API
    // server's decoder accepts and the schema's "byte" format does not: join them first.
    if (kind === 'Secret' && object.data) {
      object.data = Object.fromEntries(
        Object.entries(object.data).map(([key, value]) => [key, String(value).replace(/\s+/g, '')]),
      );
    }
    new Model(object).validate();
  } catch (error) {
    entry.error = error instanceof Error ? error.message : String(error);
  }
  results.push(entry);
}
process.stdout.write(JSON.stringify(results));
