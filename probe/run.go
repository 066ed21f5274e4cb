package probe

import (
	"runtime/debug"
	"time"
)

// ChildCommand is the first argument of a probe child: Child acts only on
// "PROGRAM probe-child NAME" with CORDON_PROBE=NAME in the environment.
const ChildCommand = "probe-child"

// childEnv names the probe a child runs; it is the child's whole
// environment.
const childEnv = "CORDON_PROBE"

// DefaultTimeout bounds a whole probe run when Options.Timeout is zero. A
// probe takes tens of milliseconds; the limit is for a machine so busy
// that the kernel holds clone for seconds.
const DefaultTimeout = 10 * time.Second

// Options configure Run and Load. The zero value probes with the running
// program and caches in CacheDir.
type Options struct {
	// Executable is the program the probe children run; it must call
	// Child first thing in main. Empty means the running program.
	Executable string
	// Fresh makes Load probe again instead of answering from its cache;
	// the new result is cached.
	Fresh bool
	// CacheDir is where Load keeps its cache; empty means CacheDir().
	CacheDir string
	// NoCache makes Load neither read nor write a cache.
	NoCache bool
	// Timeout bounds the probes; zero means DefaultTimeout.
	Timeout time.Duration
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// version returns the version of the main module of the running program,
// with its VCS revision when the build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "+dirty"
		}
	}
	return v
}
