# The SQLite FTS5 baseline, one reading of the vault for both its uses:
# title is the file name, headings the ATX heading lines outside code
# fences, body the text after the frontmatter, tokenize='porter unicode61'.
#
# `make eval` (see doc.go) runs it with no arguments: it reads {"vault",
# "questions", "k"} as JSON on stdin, indexes in memory, and writes
# {"notes", "results": [[path, ...], ...]} (an OR of the question's words,
# BM25 with title weight 10, headings 5, body 1).
#
# `make bench BENCH_VAULT=dir` runs it as
#   python3 internal/eval/fts5.py index VAULT_DIR INDEX_FILE [BENCHMARK_NAME]
# which indexes every note into a new on-disk table and prints one
# `go test -bench` style line with the time, notes per second and the
# process's peak memory.
import json, os, re, resource, sqlite3, sys, time

heading = re.compile(r"^#{1,6}\s+(.*)$")
fence = re.compile(r"^\s{0,3}(```|~~~)")
frontmatter_end = re.compile(r"\r?\n---[ \t]*(\r?\n|$)")


def notes(root):
    """Yields (path, title, headings, body) for every note under root."""
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
                end = frontmatter_end.search(text[3:])
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
            yield (rel, name[:-3], "\n".join(heads), text)


def create(path):
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, headings, body, tokenize='porter unicode61')")
    return db


def index_only(root, dbpath, name):
    start = time.monotonic()
    if os.path.exists(dbpath):
        os.remove(dbpath)
    db = create(dbpath)
    with db:
        db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", notes(root))
    n = db.execute("SELECT count(*) FROM notes").fetchone()[0]
    db.close()
    sec = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name} 1 {n} notes {n / sec:.1f} notes/s {sec:.3f} s/index {peak:.1f} peak_MB")


def answer(req):
    db = create(":memory:")
    rows = list(notes(req["vault"]))
    db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows)
    word = re.compile(r"\w+", re.UNICODE)
    results = []
    for q in req["questions"]:
        words = word.findall(q)
        if not words:
            results.append([])
            continue
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        cur = db.execute("SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes, 0, 10.0, 5.0, 1.0) LIMIT ?", (match, req["k"]))
        results.append([r[0] for r in cur])
    json.dump({"notes": len(rows), "results": results}, sys.stdout)


if len(sys.argv) > 1 and sys.argv[1] == "index":
    if len(sys.argv) < 4:
        sys.exit("usage: python3 internal/eval/fts5.py index VAULT_DIR INDEX_FILE [BENCHMARK_NAME]")
    index_only(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "BenchmarkFTS5IndexVault")
else:
    answer(json.load(sys.stdin))
