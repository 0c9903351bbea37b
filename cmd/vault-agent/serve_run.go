package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/vault-agent/vault-agent/rpc"
)

// serve runs the JSON-RPC server on stdin/stdout. An exit notification
// without a prior shutdown ends the process with status 1, as in LSP.
func serve(ctx context.Context, log *slog.Logger, vf vaultFlags, codec string, in io.Reader, out io.Writer) error {
	cfg := rpc.Config{
		Vault:   vf.vault,
		Index:   vf.index,
		Codec:   codec,
		Logger:  log,
		Version: version,
	}
	vf.settings(&cfg.Settings)
	srv := rpc.New(cfg)
	err := srv.Serve(ctx, in, out)
	if errors.Is(err, rpc.ErrExitWithoutShutdown) {
		return &exitError{code: 1}
	}
	return err
}
