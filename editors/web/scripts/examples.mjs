// Writes the example menu (examples.tsv) as JSON, with the fixtures' text, to stdout.
import fs from "node:fs";
import path from "node:path";

const web = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const fixtures = path.join(web, "..", "..", "fixtures");
const examples = [];
for (const line of fs.readFileSync(path.join(web, "examples.tsv"), "utf8").split("\n")) {
  if (!line.trim() || line.startsWith("#")) continue;
  const [title, gpu, ...names] = line.split("\t");
  const files = names.map((name) => ({ name, text: fs.readFileSync(path.join(fixtures, name), "utf8") }));
  examples.push({ title, gpu, files });
}
process.stdout.write(JSON.stringify(examples));
