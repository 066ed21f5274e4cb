package runtime_test

import (
	"context"
	"fmt"
	"os"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

// Example runs `make test` in the current directory under the embedded
// default policy. A program that does this calls runtime.Init first thing
// in main, because libcontainer re-executes it to set the sandbox up:
//
//	func main() {
//		runtime.Init()
//		...
//	}
func Example() {
	workspace, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	pol, err := policy.Default(workspace, home)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	host, err := runtime.HostPaths(runtime.StateRoot())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	if err := runtime.Prepare(host); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	id := runtime.NewID()
	s, err := spec.Compile(pol, spec.Request{
		ID:   id,
		Args: []string{"make", "test"},
		Cwd:  workspace,
		Env:  os.Environ(),
		UID:  uint32(os.Getuid()),
		GID:  uint32(os.Getgid()),
		Host: host,
	}, probe.Basic())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	status, err := runtime.Run(context.Background(), s, runtime.Options{
		ID:     id,
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cordon:", err)
		return
	}
	fmt.Println("make test exited with", status)
}
