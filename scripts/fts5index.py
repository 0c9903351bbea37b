# The SQLite FTS5 baseline of `make bench BENCH_VAULT=dir`: indexes every
# note of the vault into a new on-disk FTS5 table, as internal/eval/fts5.py
# does in memory (title = file name, headings = ATX heading lines outside
# code fences, body = text after the frontmatter, tokenize='porter
# unicode61'), and prints one `go test -bench` style line with the time,
# the notes per second and the process's peak memory.
#   python3 scripts/fts5index.py VAULT_DIR INDEX_FILE [BENCHMARK_NAME]
import os, re, resource, sqlite3, sys, time

root, dbpath = sys.argv[1], sys.argv[2]
name = sys.argv[3] if len(sys.argv) > 3 else "BenchmarkFTS5IndexVault"
start = time.monotonic()
if os.path.exists(dbpath):
    os.remove(dbpath)
db = sqlite3.connect(dbpath)
db.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, headings, body, tokenize='porter unicode61')")
heading = re.compile(r"^#{1,6}\s+(.*)$")
fence = re.compile(r"^\s{0,3}(```|~~~)")
frontmatter_end = re.compile(r"\r?\n---[ \t]*(\r?\n|$)")


def rows():
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.lower().endswith(".md") or name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            with open(full, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if text.startswith("---\n") or text.startswith("---\r\n"):
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


with db:
    db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows())
n = db.execute("SELECT count(*) FROM notes").fetchone()[0]
db.close()
sec = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{name} 1 {n} notes {n / sec:.1f} notes/s {sec:.3f} s/index {peak:.1f} peak_MB")
