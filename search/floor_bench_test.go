package search

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/vault-agent/vault-agent/vault"
)

// BenchmarkBleveFloor measures what bleve alone takes to index the vault
// $VAULT_AGENT_BENCH_VAULT: the part of a first index that no change
// outside bleve can remove. Before the timer starts, every note is read,
// parsed and mapped to its document (without the context of the links to
// it); then the documents are written in batches of 500 into a new index on
// disk with the index's own settings (unsafe batches, merge policy, the
// fused analysis, the bulk collector growth), and the timer stops when the
// last batch is persisted. Run it in a process of its own, as make bench
// does: after BenchmarkIndexVault in the same process it took 6.5 s
// instead of 4.0-4.3 on powershell-docs.
func BenchmarkBleveFloor(b *testing.B) { bleveFloor(b, false) }

// BenchmarkBleveFloorFTS5Fields is BenchmarkBleveFloor with documents that
// hold only what the SQLite FTS5 baseline indexes (title, headings and
// body, with positions for phrases, porter stems): bleve doing FTS5's job.
func BenchmarkBleveFloorFTS5Fields(b *testing.B) { bleveFloor(b, true) }

func bleveFloor(b *testing.B, fts5Fields bool) {
	vaultDir := os.Getenv("VAULT_AGENT_BENCH_VAULT")
	if vaultDir == "" {
		b.Skip("VAULT_AGENT_BENCH_VAULT not set")
	}
	im, err := newMapping()
	if err != nil {
		b.Fatal(err)
	}
	if fts5Fields {
		doc := mapping.NewDocumentStaticMapping()
		for _, f := range []string{fTitle, fHeadings, fBody} {
			doc.AddFieldMappingsAt(f, textFieldMapping(textAnalyzer, true))
		}
		doc.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
		im.DefaultMapping = doc
	}
	fused := fusedChainFor(im.AnalyzerNamed(textAnalyzer))
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	if err := v.Walk(context.Background(), func(fi vault.FileInfo) error { paths = append(paths, fi.Path); return nil }); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		docs := make([]*document.Document, 0, len(paths))
		for _, p := range paths {
			raw, err := v.ReadRaw(p, -1)
			if err != nil {
				b.Fatal(err)
			}
			doc, err := noteDoc(im, fused, vault.ParseForIndex(raw.Path, raw.Content, raw.ModTime), nil)
			if err != nil {
				b.Fatal(err)
			}
			docs = append(docs, doc)
		}
		runtime.GC()
		idx, err := bleve.NewUsing(filepath.Join(b.TempDir(), "idx"), im, scorch.Name, scorch.Name, runtimeConfig())
		if err != nil {
			b.Fatal(err)
		}
		// The collector at the bulk sync's growth, but no soft limit: the
		// documents held for the run are more than a sync ever holds.
		// With VAULT_AGENT_BENCH_FLOOR_GC=off, no collection at all (the
		// floor without the collector's share; needs memory for every
		// byte the index allocates, 4-5 GB for 14,000 notes).
		gcPercent := bulkGCPercent
		if os.Getenv("VAULT_AGENT_BENCH_FLOOR_GC") == "off" {
			gcPercent = -1
		}
		prevGC := debug.SetGCPercent(gcPercent)
		b.StartTimer()
		start := time.Now()
		for len(docs) > 0 {
			n := min(500, len(docs))
			batch := idx.NewBatch()
			for _, d := range docs[:n] {
				if err := batch.IndexAdvanced(d); err != nil {
					b.Fatal(err)
				}
			}
			docs = docs[n:]
			if len(docs) > 0 {
				if err := idx.Batch(batch); err != nil {
					b.Fatal(err)
				}
				continue
			}
			persisted := make(chan error, 1) // the last batch: until persisted
			batch.SetPersistedCallback(func(err error) { persisted <- err })
			if err := idx.Batch(batch); err != nil {
				b.Fatal(err)
			}
			if err := <-persisted; err != nil {
				b.Fatal(err)
			}
		}
		sec := time.Since(start).Seconds()
		b.StopTimer()
		debug.SetGCPercent(prevGC)
		b.ReportMetric(sec, "s/index")
		b.ReportMetric(float64(len(paths))/sec, "notes/s")
		idx.Close()
	}
}
