# The FTS5 baseline of `make eval` (see doc.go): title is the file name,
# headings the ATX heading lines outside code fences, body the text after the
# frontmatter. Reads {"vault", "questions",
# "k"} as JSON on stdin; writes {"notes", "results": [[path, ...], ...]}.
import json, os, re, sqlite3, sys

req = json.load(sys.stdin)
root, k = req["vault"], req["k"]
db = sqlite3.connect(":memory:")
db.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, headings, body, tokenize='porter unicode61')")
heading = re.compile(r"^#{1,6}\s+(.*)$")
fence = re.compile(r"^\s{0,3}(```|~~~)")
rows = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    for name in sorted(filenames):
        if not name.lower().endswith(".md") or name.startswith("."):
            continue
        full = os.path.join(dirpath, name)
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if text.startswith("---\n") or text.startswith("---\r\n"):
            # The body is what follows the frontmatter block.
            end = re.search(r"\r?\n---[ \t]*(\r?\n|$)", text[3:])
            if end:
                text = text[3 + end.end():]
        heads, in_code = [], False
        for line in text.splitlines():
            if fence.match(line):
                in_code = not in_code
            elif not in_code:
                m = heading.match(line)
                if m:
                    heads.append(m.group(1))
        rel = os.path.relpath(full, root).replace(os.sep, "/")
        rows.append((rel, name[:-3], "\n".join(heads), text))
db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows)

word = re.compile(r"\w+", re.UNICODE)
results = []
for q in req["questions"]:
    words = word.findall(q)
    if not words:
        results.append([])
        continue
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    cur = db.execute("SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 10.0, 5.0, 1.0) LIMIT ?", (match, k))
    results.append([r[0] for r in cur])
json.dump({"notes": len(rows), "results": results}, sys.stdout)
