package serve

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/runtime"
)

// Run is a request compiled by the daemon's owner: the command's spec and
// the options of its run, as cordon run would give them to runtime.Run;
// or, for a request that runs no command (Request.Hook), Direct.
type Run struct {
	// Direct, when set, answers the request in the daemon itself, on the
	// client's descriptors, and returns the client's exit status: no
	// sandbox, and nothing else of the Run is used.
	Direct func(ctx context.Context) int
	Spec   *specs.Spec
	// Options are the run's, with the client's descriptors.
	Options runtime.Options
	// Sandbox are the options the sandbox is made with (its proxy; with
	// Alone, its id may be set).
	Sandbox runtime.Options
	// Key is what the sandbox is made of besides its spec: its proxy's
	// (netproxy.Config.Key).
	Key string
	// Alone has the sandbox made for this run alone, not taken from the
	// pool: its proxy holds the run's own (a program asked about
	// destinations on this client's stderr, masked credentials).
	Alone bool
	// Bind tells the run the id of the sandbox it got, before it starts.
	Bind func(id string)
	// Done is called once the run is over, with its status or error.
	Done func(status int, err error)
	// Abandon, instead of Done, is called when no sandbox could be made
	// for the run: nothing ran, and the client runs the command itself.
	Abandon func()
}

// Compiler compiles a request, as cordon run compiles its command line:
// files are the client's stdin, stdout and stderr, and the descriptor of
// cordon run's --cwd-fd when it has one. A *Declined error leaves the
// request to the client.
type Compiler func(ctx context.Context, req *Request, files []*os.File) (*Run, error)

// Server is the daemon.
type Server struct {
	// Compile compiles each request.
	Compile Compiler
	// Pool is how many sandboxes are kept ready per policy.
	Pool int
	// Idle ends Serve after that long without a request (0: never).
	Idle time.Duration
	// Root is cordon's state directory (runtime.StateRoot).
	Root string
	// Stale reports whether the daemon must give way: cordon's binary was
	// replaced, or the settings no longer ask for it. Requests are then
	// declined and Serve returns.
	Stale func() bool
	// Binary is the BinaryID of the cordon binary the daemon runs: a
	// request naming another is declined.
	Binary string
	// Log receives what the daemon has to say about itself.
	Log io.Writer

	st *state
}
