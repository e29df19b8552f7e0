"""Writes the job schemas of schemas/openapi.yaml from schemas/job.schema.json, the one source of the job contract.

The block between the BEGIN and END lines under `components: schemas:` is generated: `JobRequest` (the job with
`app` optional, since the path names the app) and the job schema's `$defs` as `Job_<name>`. `--check` fails if the
block differs from what this would write (run by the contract test), so the two documents never drift apart.

Usage: python sync_openapi.py [--check]
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "schemas", "job.schema.json")
OPENAPI = os.path.join(ROOT, "schemas", "openapi.yaml")
BEGIN = "    # BEGIN generated from schemas/job.schema.json by tools/contract/sync_openapi.py: do not edit"
END = "    # END generated from schemas/job.schema.json"


def rewrite_refs(value):
    if isinstance(value, dict):
        return {k: ("#/components/schemas/Job_" + v[len("#/$defs/"):] if k == "$ref" and v.startswith("#/$defs/")
                    else rewrite_refs(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [rewrite_refs(v) for v in value]
    return value


def block():
    job = json.load(open(JOB))
    defs = job.pop("$defs", {})
    for key in ("$schema", "$id", "title"):
        job.pop(key, None)
    job["description"] = "A job as in schemas/job.schema.json, with app optional (the path names it). " + job[
        "description"]
    job["required"] = [name for name in job["required"] if name != "app"]
    schemas = {"JobRequest": rewrite_refs(job)}
    schemas.update({"Job_" + name: rewrite_refs(value) for name, value in defs.items()})
    lines = [BEGIN]
    for name, schema in schemas.items():
        text = json.dumps(schema, indent=1, ensure_ascii=True)
        lines.append(f"    {name}:")
        lines.extend("      " + line for line in text.split("\n"))
    lines.append(END)
    return "\n".join(lines)


def main():
    text = open(OPENAPI).read()
    generated = block()
    if BEGIN in text:
        start = text.index(BEGIN)
        end = text.index(END) + len(END)
        current = text[start:end]
    else:
        anchor = "  schemas:\n"
        start = end = text.index(anchor) + len(anchor)
        current = None
        generated += "\n"
    if "--check" in sys.argv:
        if current != generated:
            print("schemas/openapi.yaml is out of date with schemas/job.schema.json: "
                  "run python tools/contract/sync_openapi.py", file=sys.stderr)
            return 1
        return 0
    open(OPENAPI, "w").write(text[:start] + generated + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
