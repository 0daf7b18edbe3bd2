// Generates a TypeScript client from the live schema and tells the incident story with it:
//   node ts-story/run.mjs WORKDIR [STORY]
// WORKDIR holds openapi.json (the schema the server serves) and env.json (base URL, a service
// key, two operators' sessions). In WORKDIR it writes schema.d.ts (openapi-typescript),
// env.ts and story.ts, runs `tsc --strict --noEmit` over them (any error fails), compiles and
// runs the story, then validates every answer it got (status, media type, body) against the
// schema with ajv. Prints one line per step; exits 1 on the first failure.

import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import Ajv from "ajv";
import addFormats from "ajv-formats";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const tools = dirname(here);
const work = process.argv[2];
const story = process.argv[3] ?? join(here, "story.ts");  // another story: the guards' tests
const schema = JSON.parse(readFileSync(join(work, "openapi.json"), "utf8"));
const env = JSON.parse(readFileSync(join(work, "env.json"), "utf8"));

// openapi-typescript's default settings, as an integrator runs it: the schema alone must make
// every field the server fills in optional.
const types = await openapiTS(schema);
writeFileSync(join(work, "schema.d.ts"), astToString(types));
writeFileSync(join(work, "env.ts"), [
  "export type Session = { cookie: string; csrfToken: string };",
  `export const baseUrl: string = ${JSON.stringify(env.baseUrl)};`,
  `export const serviceKey: string = ${JSON.stringify(env.serviceKey)};`,
  `export const alice: Session = ${JSON.stringify(env.alice)};`,
  `export const bob: Session = ${JSON.stringify(env.bob)};`,
  "",
].join("\n"));
copyFileSync(story, join(work, "story.ts"));
// Bodies the server refuses must not compile either (each line is an @ts-expect-error).
copyFileSync(join(here, "refused.ts"), join(work, "refused.ts"));
writeFileSync(join(work, "package.json"), '{"type": "module"}\n');
symlinkSync(join(tools, "node_modules"), join(work, "node_modules"), "dir");
const compilerOptions = {
  strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler",
  lib: ["ES2022", "DOM", "DOM.Iterable"], skipLibCheck: false, noUncheckedIndexedAccess: false,
  types: [],
};
writeFileSync(join(work, "tsconfig.json"), JSON.stringify(
  { compilerOptions, files: ["story.ts", "refused.ts"] }, null, 2));
console.log("generated schema.d.ts from the live schema");

const casts = readFileSync(story, "utf8").split("\n")
  .filter((line) => /\bas\s+(?!const\b)[A-Za-z{[]|<[A-Za-z]+>\s*\w|\bany\b|@ts-/.test(line)
    && !line.trimStart().startsWith("//"));
if (casts.length) {
  console.log(`casts in story.ts:\n${casts.join("\n")}`);
  process.exit(1);
}

try {
  execFileSync(process.execPath, [join(tools, "node_modules/typescript/bin/tsc"), "-p", work],
    { stdio: "pipe", encoding: "utf8" });
} catch (failed) {
  console.log(`tsc --strict --noEmit failed:\n${failed.stdout}${failed.stderr}`);
  process.exit(1);
}
console.log("tsc --strict --noEmit: no errors, no casts");

for (const name of ["story", "env"]) {
  const source = readFileSync(join(work, `${name}.ts`), "utf8");
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  // The story imports "./env" (bundler resolution); node wants the file's name.
  writeFileSync(join(work, `${name}.js`), outputText.replace('from "./env"', 'from "./env.js"'));
}
const { main } = await import(pathToFileURL(join(work, "story.js")).href);
let answers;
try {
  answers = await main();
} catch (failed) {
  console.log(String(failed.stack || failed));
  process.exit(1);
}
console.log(`story told: ${answers.length} answers`);

// Every answer against what the schema declares for its operation, status and media type.
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("decimal", true);
ajv.addSchema({ $id: "openapi", components: schema.components });
const toAjv = (node) => JSON.parse(JSON.stringify(node).replaceAll('"#/components/', '"openapi#/components/'));
const problems = [];
for (const answer of answers) {
  const operation = schema.paths[answer.schemaPath]?.[answer.method.toLowerCase()];
  const declared = operation?.responses?.[String(answer.status)];
  const media = answer.contentType.split(";")[0].trim();
  const where = `${answer.method} ${answer.schemaPath} ${answer.status} ${media}`;
  if (!declared) {
    problems.push(`${where}: status not declared`);
    continue;
  }
  const content = declared.content?.[media];
  if (!content) {
    problems.push(`${where}: media type not declared`);
    continue;
  }
  const validate = ajv.compile(toAjv(content.schema));
  if (!validate(answer.body)) {
    problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
  }
}
if (problems.length) {
  console.log(`answers the schema does not describe:\n${problems.join("\n")}`);
  process.exit(1);
}
console.log(`ajv: all ${answers.length} answers match the schema`);
