// Parses and validates an AsyncAPI document (with its $refs to schemas/events and
// schemas/facts); prints every diagnostic and exits 1 if any is an error.
// Usage: node tools/contract/check-asyncapi.mjs schemas/asyncapi.yaml
import { resolve } from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';

const path = resolve(process.argv[2]);
const parser = new Parser();
const { document, diagnostics } = await fromFile(parser, path).parse();
const errors = diagnostics.filter((d) => d.severity === 0);
for (const d of diagnostics) {
  console.log(`${['error', 'warning', 'info', 'hint'][d.severity]} ${d.code}: ${d.message} at ${d.path.join('/')}`);
}
if (!document || errors.length) {
  console.log(`${errors.length} error(s) in ${path}`);
  process.exit(1);
}
console.log(`${path}: valid AsyncAPI ${document.version()}, ${document.allMessages().length} messages`);
