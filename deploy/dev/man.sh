#!/usr/bin/env bash
# Writes a man page (roff) for herald and for each of its subcommands, generated from the command parser's own
# description of itself (`herald --experimental-dump-help`: every command, argument, default and help text), so
# the pages always match the binary. Usage: deploy/dev/man.sh [HERALD_BINARY] [OUTPUT_DIR]
set -euo pipefail

HERALD=${1:-.build/debug/herald}
OUT=${2:-.build/man}
[ -x "$HERALD" ] || { echo "man.sh: $HERALD not found; build it first: swift build --product herald" >&2; exit 1; }
command -v python3 >/dev/null || { echo "man.sh: python3 is needed to write the pages" >&2; exit 1; }
mkdir -p "$OUT"
VERSION=$("$HERALD" --version 2>/dev/null | head -n 1 || true)

"$HERALD" --experimental-dump-help | python3 -c '
import json, sys, os, datetime

out, version = sys.argv[1], sys.argv[2] or "herald"
date = datetime.date.today().isoformat()

def esc(text):
    text = (text or "").replace("\\", "\\e")
    return "\n".join(("\\&" + line) if line.startswith((".", "\x27")) else line for line in text.split("\n"))

def names(argument):
    parts = []
    for name in argument.get("names") or []:
        parts.append(("--" if name["kind"] == "long" else "-") + name["name"])
    return ", ".join(parts)

def page(command, path):
    title = " ".join(path)
    lines = [".TH \"%s\" 1 \"%s\" \"%s\" \"Herald\"" % (title.upper().replace(" ", "-"), date, esc(version)),
             ".SH NAME", "%s \\- %s" % (esc(title), esc(command.get("abstract", "")))]
    arguments = [a for a in command.get("arguments") or [] if a.get("shouldDisplay", True)]
    synopsis = [title]
    for a in arguments:
        if a["kind"] == "positional":
            synopsis.append("<%s>" % a.get("valueName", "value"))
        else:
            item = names(a).split(", ")[0] + ("" if a["kind"] == "flag" else " <%s>" % a.get("valueName", "value"))
            synopsis.append(("[%s]" % item) if a.get("isOptional") else item)
    subcommands = command.get("subcommands") or []
    if subcommands:
        synopsis.append("<subcommand>")
    lines += [".SH SYNOPSIS", esc(" ".join(synopsis))]
    if command.get("discussion"):
        lines += [".SH DESCRIPTION", ".nf", esc(command["discussion"]), ".fi"]
    if arguments:
        lines.append(".SH OPTIONS")
        for a in arguments:
            label = names(a) if a["kind"] != "positional" else "<%s>" % a.get("valueName", "value")
            if a["kind"] == "option":
                label += " <%s>" % a.get("valueName", "value")
            text = a.get("abstract", "")
            if a.get("defaultValue") not in (None, ""):
                text += " (default: %s)" % a["defaultValue"]
            if a.get("isRepeating"):
                text += " (repeatable)"
            lines += [".TP", ".B " + esc(label), esc(text)]
    if subcommands:
        lines.append(".SH SUBCOMMANDS")
        for sub in subcommands:
            lines += [".TP", ".B " + esc(sub["commandName"]), esc(sub.get("abstract", ""))]
    lines += [".SH SEE ALSO", "docs/cli.md and docs/configuration.md in the Herald repository."]
    with open(os.path.join(out, ".".join(path) + ".1"), "w") as f:
        f.write("\n".join(lines) + "\n")
    count = 1
    for sub in subcommands:
        if sub["commandName"] == "help":
            continue
        count += page(sub, path + [sub["commandName"]])
    return count

tool = json.load(sys.stdin)
print("man.sh: %d pages in %s" % (page(tool["command"], [tool["command"]["commandName"]]), out))
' "$OUT" "$VERSION"
