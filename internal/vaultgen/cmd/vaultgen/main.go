// Command vaultgen writes a deterministic synthetic vault for benchmarks.
//
//	go run ./internal/vaultgen/cmd/vaultgen -n 10000 -out /tmp/vault10k
//	go run ./internal/vaultgen/cmd/vaultgen -touch 50 -out /tmp/vault10k
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vault-agent/vault-agent/internal/vaultgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vaultgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var o vaultgen.Options
	out := flag.String("out", "", "directory to create the vault in (must be empty or missing)")
	flag.IntVar(&o.Notes, "n", 1000, "number of notes")
	flag.Int64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same vault")
	flag.IntVar(&o.AvgSize, "size", 6000, "average note size in bytes")
	flag.IntVar(&o.Folders, "folders", 0, "number of folders (default notes/40)")
	flag.IntVar(&o.MaxDepth, "depth", 4, "maximum folder depth")
	flag.IntVar(&o.Workers, "workers", 0, "writer goroutines (default GOMAXPROCS; output is identical)")
	touch := flag.Int("touch", 0, "instead of generating, append a paragraph to this many notes of -out")
	flag.Parse()
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	if *touch > 0 {
		paths, err := vaultgen.TouchNotes(*out, *touch, o.Seed)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Println(p)
		}
		return nil
	}
	st, err := vaultgen.Generate(*out, o)
	if err != nil {
		return err
	}
	fmt.Printf("%d notes (%d daily) in %d folders, %.1f MB, %d links (%d broken), %s\n",
		st.Notes, st.DailyNotes, st.Folders, float64(st.Bytes)/1e6, st.Links, st.BrokenLinks, st.Took.Round(1e6))
	return nil
}
