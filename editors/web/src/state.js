// The playground's state in the URL fragment, so that a link carries the whole project:
//   #gpu=NAME&file=FILENAME&text=PERCENT-ENCODED-CONTENT[&file=…&text=…][&active=FILENAME]
// Values are percent-encoded (encodeURIComponent); a `+` is a plus sign, not a space.

/** @typedef {{files: {name: string, text: string}[], active: string, gpu: string}} Project */

/** The project a fragment describes, or null when it names no file. */
export function parseFragment(fragment) {
  const body = fragment.startsWith("#") ? fragment.slice(1) : fragment;
  const files = [];
  let gpu = "";
  let active = "";
  for (const part of body.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    let value;
    try {
      value = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1));
    } catch {
      continue; // a malformed escape: skip the pair rather than lose the rest
    }
    if (key === "gpu") gpu = value;
    else if (key === "active") active = value;
    else if (key === "file") files.push({ name: value, text: "" });
    else if (key === "text" && files.length > 0) files[files.length - 1].text = value;
  }
  if (files.length === 0) return null;
  if (!files.some((f) => f.name === active)) active = files[0].name;
  return { files, active, gpu };
}

/** The fragment that carries `project` (the active file is named when it is not the first). */
export function toFragment(project) {
  const parts = [];
  if (project.gpu) parts.push(`gpu=${encodeURIComponent(project.gpu)}`);
  for (const file of project.files) {
    parts.push(`file=${encodeURIComponent(file.name)}`, `text=${encodeURIComponent(file.text)}`);
  }
  if (project.files.length > 1 && project.active !== project.files[0].name) {
    parts.push(`active=${encodeURIComponent(project.active)}`);
  }
  return `#${parts.join("&")}`;
}
