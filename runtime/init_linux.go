package runtime

import (
	"fmt"
	"os"

	"github.com/opencontainers/runc/libcontainer"
)

// Init runs libcontainer's setup of a new sandbox when this process is its
// re-execution ("cordon init"), and never returns then. Otherwise it returns
// at once. Call it first thing in main.
//
// cordon's own init, the sandbox's first process ("cordon sandbox-init",
// see spec.InitCommand), never reaches Go: it is sandboxinit.c, run from a
// constructor before the Go runtime starts.
func Init() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		// First the host view, when cordon hands it over (see
		// bindHostView); a failure ends the sandbox before anything runs.
		if err := bindHostView(); err != nil {
			fmt.Fprintf(os.Stderr, "cordon: %v\n", err)
			os.Exit(1)
		}
		libcontainer.Init()
	}
}
