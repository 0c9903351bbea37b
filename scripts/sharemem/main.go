// Command sharemem measures what a second vault-agent front-end on a vault
// costs: the resident memory of every vault-agent process with one
// front-end at work on the vault (an MCP server), then with two (the MCP
// server and a second one, serve, mcp or acp), each doing the same work:
// searches, note reads and one agent question (acp: three questions in a
// session). It runs the two setups in
// turn, several times, and prints the medians: RSS (the sum over the
// processes, which counts the binary's code pages once per process) and
// PSS (pages shared between processes divided among them: what the
// machine spends). The index is built once beforehand, in a cache folder
// of its own, so that no run pays for indexing.
//
//	go run ./scripts/sharemem -bin bin/vault-agent -vault /work/vaults/obsidian-hub -runs 5
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/vault-agent", "the vault-agent binary")
	vaultDir := flag.String("vault", "/work/vaults/obsidian-hub", "the vault (read only)")
	runs := flag.Int("runs", 5, "runs of each setup")
	second := flag.String("second", "serve", "the second front-end: serve, mcp or acp")
	verbose = flag.Bool("v", false, "print each process's memory")
	flag.DurationVar(&rest, "rest", 0, "how long the front-ends wait idle after the work before their memory is read (0: at once)")
	flag.Parse()
	work, err := os.MkdirTemp("", "sharemem")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(work, "cache"), "HOME="+filepath.Join(work, "home"),
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
	idx := exec.Command(*bin, "index", "--vault", *vaultDir)
	idx.Env = env
	if out, err := idx.CombinedOutput(); err != nil {
		log.Fatalf("index: %v\n%s", err, out)
	}
	var one, two, onePSS, twoPSS, oneHWM, twoHWM []float64
	for i := range *runs {
		run := filepath.Join(work, fmt.Sprintf("run%d", i))
		if err := os.MkdirAll(run, 0o700); err != nil {
			log.Fatal(err)
		}
		renv := append(env, "XDG_RUNTIME_DIR="+run)
		m := measure(*bin, *vaultDir, renv, "")
		one, onePSS, oneHWM = append(one, m.rss), append(onePSS, m.pss), append(oneHWM, m.hwm)
		m = measure(*bin, *vaultDir, renv, *second)
		two, twoPSS, twoHWM = append(two, m.rss), append(twoPSS, m.pss), append(twoHWM, m.hwm)
		fmt.Printf("run %d: one %.1f MB RSS (%.1f PSS), two %.1f MB RSS (%.1f PSS)\n", i+1, one[i], onePSS[i], two[i], twoPSS[i])
	}
	fmt.Printf("\nmcp alone:        RSS %.1f MB, PSS %.1f MB, peak RSS %.1f MB (medians of %d runs)\n", median(one), median(onePSS), median(oneHWM), *runs)
	fmt.Printf("mcp + %-5s:      RSS %.1f MB, PSS %.1f MB, peak RSS %.1f MB\n", *second, median(two), median(twoPSS), median(twoHWM))
	fmt.Printf("two / one:        RSS %.2fx, PSS %.2fx, peak RSS %.2fx\n", median(two)/median(one), median(twoPSS)/median(onePSS), median(twoHWM)/median(oneHWM))
}

// rest is the -rest flag.
var rest time.Duration

type mem struct{ rss, pss, hwm float64 }

var verbose *bool

// measure starts an MCP server on the vault, has it work, then the second
// front-end ("" none) likewise, then the MCP server again (with or
// without a second front-end), and returns the memory of the processes
// together.
func measure(bin, vaultDir string, env []string, second string) mem {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first := start(ctx, bin, env, "line", "mcp", "--vault", vaultDir)
	defer first.stop()
	mcpInit(ctx, first)
	mcpWork(ctx, first)
	procs := []*proc{first}
	if second != "" {
		var p *proc
		switch second {
		case "serve":
			p = start(ctx, bin, env, "header", "serve")
			serveWork(ctx, p, vaultDir)
		case "mcp":
			p = start(ctx, bin, env, "line", "mcp", "--vault", vaultDir)
			mcpInit(ctx, p)
			mcpWork(ctx, p)
		case "acp":
			p = start(ctx, bin, env, "line", "acp")
			acpWork(ctx, p, vaultDir)
		default:
			log.Fatalf("-second %q: want serve, mcp or acp", second)
		}
		defer p.stop()
		procs = append(procs, p)
	}
	// The first front-end works again, alone or beside the second: both
	// setups give it the same work, so that the difference is what the
	// second one costs.
	mcpWork(ctx, first)
	// A front-end gives memory back once it has been idle a while: -rest
	// reads it then, as it stands through a day of mostly waiting.
	time.Sleep(rest)
	var m mem
	var each []string
	for _, p := range procs {
		pid := p.cmd.Process.Pid
		rss := statusKB(pid, "/proc/%d/status", "VmRSS:") / 1024
		anon := statusKB(pid, "/proc/%d/status", "RssAnon:") / 1024
		pss := statusKB(pid, "/proc/%d/smaps_rollup", "Pss:") / 1024
		m.rss += rss
		m.pss += pss
		m.hwm += statusKB(pid, "/proc/%d/status", "VmHWM:") / 1024
		each = append(each, fmt.Sprintf("%s %.1f RSS (%.1f anonymous) %.1f PSS [%s]", p.cmd.Args[1], rss, anon, pss, mappings(pid)))
	}
	if *verbose {
		fmt.Println("  " + strings.Join(each, "; "))
	}
	return m
}

var queries = []string{"dataview plugin", "templater daily note", "how to sync my vault", "canvas", "graph view colours",
	"excalidraw drawing", "tasks plugin due dates", "publish a site", "zettelkasten method", "spaced repetition flashcards"}

func mcpInit(ctx context.Context, p *proc) {
	p.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sharemem", "version": "1"}})
	p.notify("notifications/initialized", nil)
}

func mcpWork(ctx context.Context, p *proc) {
	for _, q := range queries {
		res := p.call(ctx, "tools/call", map[string]any{"name": "search_notes", "arguments": map[string]any{"query": q, "limit": 5}})
		var out struct {
			StructuredContent struct {
				Results []struct{ Path string } `json:"results"`
			} `json:"structuredContent"`
		}
		_ = json.Unmarshal(res, &out)
		for _, r := range out.StructuredContent.Results[:min(1, len(out.StructuredContent.Results))] {
			p.call(ctx, "tools/call", map[string]any{"name": "read_note", "arguments": map[string]any{"path": r.Path}})
		}
	}
	p.call(ctx, "tools/call", map[string]any{"name": "list_tags", "arguments": map[string]any{}})
	p.call(ctx, "tools/call", map[string]any{"name": "ask_vault", "arguments": map[string]any{"question": "how do I make a daily note template?"}})
}

func serveWork(ctx context.Context, p *proc, vaultDir string) {
	p.call(ctx, "initialize", map[string]any{"vault": vaultDir})
	for _, q := range queries {
		res := p.call(ctx, "vault/search", map[string]any{"query": q, "limit": 5})
		var out struct {
			Results []struct{ Path string } `json:"results"`
		}
		_ = json.Unmarshal(res, &out)
		for _, r := range out.Results[:min(1, len(out.Results))] {
			p.call(ctx, "vault/readNote", map[string]any{"path": r.Path})
		}
	}
	p.call(ctx, "agent/run", map[string]any{"message": "how do I make a daily note template?"})
}

// acpWork opens a session on the vault as an editor's agent panel does and
// asks three questions in it.
func acpWork(ctx context.Context, p *proc, vaultDir string) {
	p.call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	res := p.call(ctx, "session/new", map[string]any{"cwd": vaultDir, "mcpServers": []any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
		log.Fatalf("session/new: %s", res)
	}
	for _, q := range []string{"how do I make a daily note template?", "what does the dataview plugin do?", "how to sync my vault"} {
		p.call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": q}}})
	}
}

// proc is a front-end process spoken to over its stdio; requests are one
// at a time.
type proc struct {
	cmd   *exec.Cmd
	codec string
	in    io.WriteCloser
	out   *bufio.Reader
	id    int
	mu    sync.Mutex
	err   bytes.Buffer
}

func start(_ context.Context, bin string, env []string, codec string, args ...string) *proc {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	p := &proc{cmd: cmd, codec: codec}
	cmd.Stderr = &p.err
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	p.in, p.out = in, bufio.NewReaderSize(out, 1<<20)
	return p
}

func (p *proc) stop() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func (p *proc) write(msg map[string]any) {
	b, _ := json.Marshal(msg)
	if p.codec == "header" {
		fmt.Fprintf(p.in, "Content-Length: %d\r\n\r\n", len(b))
		p.in.Write(b)
		return
	}
	p.in.Write(append(b, '\n'))
}

func (p *proc) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.write(msg)
}

// call sends a request and reads messages until its response, ignoring
// notifications; it stops the program on an error response.
func (p *proc) call(_ context.Context, method string, params any) json.RawMessage {
	p.id++
	p.write(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method, "params": params})
	for {
		body, err := p.read()
		if err != nil {
			log.Fatalf("%s: %v\n%s", method, err, p.err.String())
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil || m.ID == nil || m.Method != "" || *m.ID != p.id {
			continue
		}
		if m.Error != nil {
			log.Fatalf("%s: %s\n%s", method, m.Error, p.err.String())
		}
		return m.Result
	}
}

func (p *proc) read() ([]byte, error) {
	if p.codec != "header" {
		return p.out.ReadBytes('\n')
	}
	n := -1
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	b := make([]byte, n)
	_, err := io.ReadFull(p.out, b)
	return b, err
}

// mappings sums the resident memory of a process's mappings by kind:
// the binary's code (r-x), its read-only data (r--: rodata and the
// function tables), its writable data and bss, the Go heap and other
// anonymous memory, and every other file.
func mappings(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		log.Fatal(err)
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	kb := map[string]float64{}
	kind := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			path := ""
			if len(f) >= 6 {
				path = f[5]
			}
			switch {
			case path == exe && f[1] == "r-xp":
				kind = "text"
			case path == exe && f[1] == "r--p":
				kind = "rodata"
			case path == exe:
				kind = "data"
			case path == "" || strings.HasPrefix(path, "["):
				kind = "anon"
			default:
				kind = "files"
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok {
			n, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
			kb[kind] += n
		}
	}
	var parts []string
	for _, k := range []string{"text", "rodata", "data", "anon", "files"} {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, kb[k]/1024))
	}
	return strings.Join(parts, ", ")
}

// statusKB reads the kB value of field from a /proc file of pid.
func statusKB(pid int, file, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf(file, pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(v)
			kb, _ := strconv.ParseFloat(f[0], 64)
			return kb
		}
	}
	log.Fatalf("%s: no %s", file, field)
	return 0
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
