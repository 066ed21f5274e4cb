// Command cordon runs coding agents' shell commands in an operating-system
// sandbox, and serves as an OCI runtime for containerd and nerdctl.
package main

import (
	"context"
	"os"

	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
)

func main() {
	// libcontainer's re-execution comes before any CLI parsing.
	runtime.Init()
	// A probe child of `cordon doctor` (see probe.Child) runs one attempt
	// and exits.
	probe.Child()
	os.Exit(run(context.Background(), os.Args))
}
