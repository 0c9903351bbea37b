package main

import "testing"

func TestBaselineOf(t *testing.T) {
	for bench, want := range map[string]string{
		"BenchmarkIndexVault":           "BenchmarkFTS5IndexVault",
		"BenchmarkIndexFull10k":         "BenchmarkFTS5IndexFull10k",
		"BenchmarkBleveFloor":           "BenchmarkFTS5IndexVault",
		"BenchmarkBleveFloorFTS5Fields": "BenchmarkFTS5IndexVault",
	} {
		if got := baselineOf(bench); got != want {
			t.Errorf("baselineOf(%q) = %q, want %q", bench, got, want)
		}
	}
}
