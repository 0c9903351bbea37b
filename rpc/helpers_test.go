package rpc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vault-agent/vault-agent/vault"
)

func openVault(t testing.TB, root string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(root, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// copyVault copies the fixture vault's regular files into a temp dir.
func copyVault(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "vault")
	err := filepath.WalkDir(fixtureVault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureVault, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // symlinks stay behind: they point at fixture paths
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
