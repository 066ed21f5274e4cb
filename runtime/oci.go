package runtime

import (
	"os"
	"time"

	"cordon.dev/cordon/spec"
)

// OCI runs containers from OCI bundles the way runc does, for containerd's
// runc shim, nerdctl and the OCI validation suite: the bundle's own spec,
// through libcontainer, with no cordon init, lifeline or nested user
// namespace. A container outlives the call that created it; its state lives
// under Root. The only difference from runc is the policy a container's
// annotations or the runtime configuration ask for (see spec.Tighten).
type OCI struct {
	// Root is the state directory, runc's --root.
	Root string
	// SystemdCgroup makes systemd manage the cgroups (cgroupsPath is then
	// "slice:prefix:name"); libcontainer refuses it where systemd does not
	// run.
	SystemdCgroup bool
	// Rootless is runc's --rootless: "true", "false", or "auto"/"" to
	// decide from the caller.
	Rootless string
	// Config is the runtime-level configuration file
	// (RuntimeConfigFile by default; "-" for none).
	Config string
}

// RuntimeConfigFile is where cordon's runtime-level OCI configuration
// lives; CORDON_RUNTIME_CONFIG overrides it.
const RuntimeConfigFile = "/etc/cordon/runtime.json"

// ContainerState is what `state` and `list` print: the runtime spec's state
// with runc's additions, and what cordon enforced.
type ContainerState struct {
	Version     string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Pid         int               `json:"pid"`
	Status      string            `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owner       string            `json:"owner"`
	// Cordon is the policy cordon applied (spec.AnnotationApplied), nil
	// when the container runs exactly as under runc.
	Cordon *spec.Applied `json:"cordon,omitempty"`
	// Monitor is the container's monitor process, when its policy needs
	// one (a proxy to serve, refusals to record).
	Monitor *MonitorState `json:"cordonMonitor,omitempty"`
}

// MonitorState is what `state` says of a container's monitor.
type MonitorState struct {
	Pid int `json:"pid"`
	// Running is false once the monitor has ended: with the container, or
	// killed (the container then keeps its isolation: refusals fail with
	// ENOSYS unrecorded, and nothing reaches the network).
	Running bool `json:"running"`
}

// MonitorCommand is the hidden verb that runs a container's monitor
// (`cordon oci-monitor ID`), which `create` starts when the container's
// policy needs one; see RunMonitor.
const MonitorCommand = "oci-monitor"

// CreateOptions are the flags of `create`.
type CreateOptions struct {
	// Bundle is the bundle directory (the current one when empty).
	Bundle string
	// PidFile receives the container's init pid.
	PidFile string
	// ConsoleSocket is the AF_UNIX socket that receives the pty master
	// when the process asks for a terminal.
	ConsoleSocket string
	NoPivot       bool
	NoNewKeyring  bool
	// PreserveFDs passes descriptors 3 .. 3+PreserveFDs-1 (after any
	// LISTEN_FDS) on to the container.
	PreserveFDs int
}

// ExecOptions are the flags of `exec`.
type ExecOptions struct {
	Detach        bool
	PidFile       string
	ConsoleSocket string
	PreserveFDs   int
	IgnorePaused  bool
	// Stdin, Stdout and Stderr are the caller's, inherited by the process
	// (or copied to and from its terminal when it has one).
	Stdin, Stdout, Stderr *os.File
}

// The hook cordon adds to a container whose policy allows no network: it
// runs as `cordon NetworkHookCommand NetworkHookIsolate`, the last
// createRuntime hook (see spec.ContainerOpts.NetworkHook).
//
// NetworkHookProxy is the createContainer hook of a rootless runtime's
// container that gets the proxy: `cordon oci-hook proxy-listen SOCKET`
// makes the proxy's listening sockets inside the container's network
// namespace and hands them to the monitor (see ProxyListen).
const (
	NetworkHookCommand = "oci-hook"
	NetworkHookIsolate = "isolate-network"
	NetworkHookProxy   = "proxy-listen"
)

// Event is one line of `events`, as runc's types.Event: "stats" with the
// container's resource usage, or "oom".
type Event struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Data any    `json:"data,omitempty"`
}
