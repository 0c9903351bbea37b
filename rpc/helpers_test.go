package rpc_test

import (
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
