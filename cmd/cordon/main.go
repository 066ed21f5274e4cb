// Command cordon runs coding agents' shell commands in an operating-system
// sandbox, and serves as an OCI runtime for containerd and nerdctl.
package main

import (
	"context"
	"os"

	"cordon.dev/cordon/runtime"
)

func main() {
	// libcontainer's re-execution comes before any CLI parsing.
	runtime.Init()
	os.Exit(run(context.Background(), os.Args))
}
