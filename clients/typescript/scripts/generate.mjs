// Writes src/schema.d.ts from the API's OpenAPI document (`epimem openapi`), so the client's
// types cannot drift from what the server answers. `--check` writes nothing and fails when the
// file is not what the document gives. The binary: EPIMEM_BIN, else ../../target/debug/epimem.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = process.env.EPIMEM_BIN ?? join(here, "../../target/debug/epimem");
const document = JSON.parse(execFileSync(bin, ["openapi"], { encoding: "utf8" }));
const header =
  "// The API's request and answer types, generated from its OpenAPI document by\n" +
  "// scripts/generate.mjs: do not edit.\n\n";
const generated = header + astToString(await openapiTS(document));
const target = join(here, "src/schema.d.ts");
if (process.argv.includes("--check")) {
  if (readFileSync(target, "utf8") !== generated) {
    console.error(`${target} is not what the OpenAPI document gives: run npm run generate`);
    process.exit(1);
  }
} else {
  writeFileSync(target, generated);
}
