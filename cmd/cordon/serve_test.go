package main

import (
	"context"
	"errors"
	"os"
	"testing"

	"cordon.dev/cordon/serve"
)

// TestCompileRequestHelp: a request for cordon run's help runs nothing and
// is declined (the client prints the help itself), as protocol.md says.
func TestCompileRequestHelp(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	stdio := []*os.File{null, null, null}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"--allow-domain", "x", "--help", "--", "true"}} {
		req := &serve.Request{Cordon: serve.Version, Args: args, Cwd: "/", Env: []string{"HOME=/nonexistent"}}
		_, err := compileRequest(context.Background(), req, stdio, nil)
		var declined *serve.Declined
		if !errors.As(err, &declined) {
			t.Errorf("%q: %v, want declined", args, err)
		}
	}
}
