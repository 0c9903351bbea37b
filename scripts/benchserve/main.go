// Command benchserve measures the memory of `vault-agent serve` on an
// existing index: it builds the index first in a process of its own
// (`vault-agent index`), then starts `serve`, initializes it on the vault,
// waits until the index is ready, sends a number of vault/search requests
// (vaultgen's generated query mix, one at a time) and reads the server's
// memory from /proc. It prints one line in the form of a Go benchmark
// result, for scripts/benchmedian:
//
//	go run ./scripts/benchserve --bin ./vault-agent --vault DIR --index DIR
//
// rss_MB is the server's resident set right after the searches (VmRSS),
// hwm_MB its peak (VmHWM), anon_MB and file_MB the anonymous and
// file-backed parts of rss_MB (the second is mostly index segment pages,
// which the kernel may drop). With --idle D (0 by default: not measured)
// it then sends nothing for D and reads them again: idle_rss_MB,
// idle_anon_MB and idle_file_MB, what a server keeps between searches.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/internal/benchvault"
	"github.com/vault-agent/vault-agent/internal/vaultgen"
)

func main() {
	bin := flag.String("bin", "vault-agent", "the vault-agent binary")
	vaultDir := flag.String("vault", "", "the vault folder")
	indexDir := flag.String("index", "", "the index folder (built first when missing or stale)")
	requests := flag.Int("requests", 1000, "vault/search requests to send")
	name := flag.String("name", "BenchmarkServeRSS", "the benchmark name printed")
	idle := flag.Duration("idle", 0, "measure again after sending nothing for this long (0: not)")
	flag.Parse()
	if *vaultDir == "" || *indexDir == "" {
		fmt.Fprintln(os.Stderr, "usage: benchserve --bin BIN --vault DIR --index DIR [--requests N]")
		os.Exit(2)
	}
	if err := run(*bin, *vaultDir, *indexDir, *requests, *name, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "benchserve:", err)
		os.Exit(1)
	}
}

func run(bin, vaultDir, indexDir string, requests int, name string, idle time.Duration) error {
	build := exec.Command(bin, "index", "--vault", vaultDir, "--index", indexDir)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	cmd := exec.Command(bin, "serve", "--codec", "line")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	c := &client{w: in, r: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.call("initialize", map[string]any{"vault": vaultDir, "index": indexDir}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	for {
		res, err := c.call("vault/status", nil)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		var st struct {
			Indexing bool `json:"indexing"`
			Notes    int  `json:"notes"`
		}
		if err := json.Unmarshal(res, &st); err != nil {
			return err
		}
		if !st.Indexing && st.Notes > 0 {
			break
		}
		if time.Since(start) > 10*time.Minute {
			return errors.New("the index is not ready after 10 minutes")
		}
		time.Sleep(50 * time.Millisecond) // polling the server, which has no event for this
	}
	ready := time.Since(start)
	queries := vaultgen.Queries(50, benchvault.Seed)
	lat := make([]time.Duration, 0, requests)
	for i := range requests {
		t := time.Now()
		if _, err := c.call("vault/search", map[string]any{"query": queries[i%len(queries)], "limit": 10}); err != nil {
			return fmt.Errorf("search %q: %w", queries[i%len(queries)], err)
		}
		lat = append(lat, time.Since(t))
	}
	st, err := procStatus(cmd.Process.Pid)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	idleFigures := ""
	if idle > 0 {
		time.Sleep(idle) // the pause measured, not a synchronization
		ist, err := procStatus(cmd.Process.Pid)
		if err != nil {
			return err
		}
		idleFigures = fmt.Sprintf("\t%.1f idle_rss_MB\t%.1f idle_anon_MB\t%.1f idle_file_MB",
			ist["VmRSS:"], ist["RssAnon:"], ist["RssFile:"])
	}
	slices.Sort(lat)
	fmt.Printf("%s\t1\t%d ns/op\t%.1f rss_MB\t%.1f hwm_MB\t%.1f anon_MB\t%.1f file_MB\t%.0f ready_ms\t%.3f p50_ms\t%.3f p99_ms%s\n",
		name, elapsed.Nanoseconds(), st["VmRSS:"], st["VmHWM:"], st["RssAnon:"], st["RssFile:"],
		float64(ready.Milliseconds()), ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), idleFigures)
	in.Close()
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// client speaks newline-delimited JSON-RPC, one request at a time.
type client struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

func (c *client) call(method string, params any) (json.RawMessage, error) {
	c.id++
	req := map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, fmt.Errorf("reply %q: %w", line, err)
		}
		if msg.ID == nil || *msg.ID != c.id {
			continue // a notification, or a request of the server's
		}
		if msg.Error != nil {
			return nil, errors.New(msg.Error.Message)
		}
		return msg.Result, nil
	}
}

// procStatus reads the sizes (in MB) of /proc/PID/status.
func procStatus(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[f[0]] = kb / 1024
		}
	}
	return out, nil
}
