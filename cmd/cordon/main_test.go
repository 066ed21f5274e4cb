package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"cordon": main})
}

// TestScripts runs the CLI's txtar scripts in testdata/script against the
// real main. Commands that need namespaces are in the integration tests.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			return os.MkdirAll(e.WorkDir+"/home/.ssh", 0o700)
		},
	})
}
