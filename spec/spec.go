// Package spec compiles a sandbox policy and one command into the OCI
// runtime spec that runs it: a read-only view of the host with the
// workspace writable, private /tmp, /proc and /dev, new user, mount, pid,
// ipc, uts, network and cgroup namespaces, no capabilities, no new
// privileges, and cordon's seccomp profile. It is a pure function of its
// inputs apart from resolving the paths the policy names on the host file
// system, so its output is golden-tested on any OS.
package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/mounts"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// InitPath is where cordon's own binary is mounted inside the sandbox. It
// runs as the sandbox's first process: it forwards signals, reaps orphans
// and ends every process when the command or cordon itself ends.
const InitPath = "/.cordon/cordon"

// InitCommand is the cordon subcommand that runs as the sandbox's init.
const InitCommand = "sandbox-init"

// InitParentFD is the descriptor on which the init watches cordon: when the
// other end closes, cordon is gone and the sandbox ends.
const InitParentFD = 3

// InitSeccompFD is the descriptor from which the init reads the spec's
// seccomp profile, compiled: a little-endian uint64 of
// SECCOMP_FILTER_FLAG_* bits, then the struct sock_filter array. The init
// installs it in the command between making the command's user namespace
// and executing it, and then in itself; libcontainer installs none. The
// profile is compiled once per profile on the host instead of in every
// sandbox, and the command's user namespace can be made before the profile
// forbids making one.
const InitSeccompFD = 4

// InitNotifyFD is the unix socket on which the init hands the runtime the
// listener of the command's seccomp filter, when the profile has
// SCMP_ACT_NOTIFY rules: the runtime answers them and records what the
// sandbox refused.
const InitNotifyFD = 7

// Annotations cordon records in the spec.
const (
	AnnotationWorkspace = "dev.cordon.workspace"
	AnnotationMode      = "dev.cordon.mode"
	// AnnotationScrub is a JSON Scrub: what the runtime moves aside when
	// the run ends.
	AnnotationScrub = "dev.cordon.scrub"
)

// Request is one command to run and the facts about its caller.
type Request struct {
	// ID names the sandbox; it appears in the cgroup path.
	ID string
	// Args is the command and its arguments.
	Args []string
	// Cwd is the working directory, absolute.
	Cwd string
	// Env is the caller's environment (NAME=value); the policy filters it.
	Env []string
	// UID and GID are the caller's; the command runs with the same ids.
	UID, GID uint32
	// Groups are the caller's supplementary groups, which the command
	// keeps in the container mode (the full sandbox drops them).
	Groups []uint32
	// Terminal gives the command a new pseudo-terminal of ConsoleSize.
	Terminal    bool
	ConsoleSize *specs.Box
	// Host are the runtime's own files on the host.
	Host Host
	// FS is the host file system rooted at "/"; nil means the real one.
	FS fs.FS
	// Record asks for the file accesses the sandbox refuses to be
	// recorded, at a cost (see Record).
	Record Record
	// Mode is how the command is confined: ModeFull ("" too) or
	// ModeContainer (see container.go).
	Mode string
	// HostProc binds the host's /proc instead of a fresh procfs, where an
	// outer container's masks forbid mounting one
	// (sandbox.enableWeakerNestedSandbox).
	HostProc bool
	// Caches are the package managers' directories made writable
	// without the host's being written (CacheView).
	Caches []CacheView
	// Debug, when set, is told what the plan left out and why, one
	// message at a time (cordon run --debug).
	Debug func(msg string)
	// Masked are the fakes of the policy's masked credentials, made when
	// the run starts (see Masked).
	Masked Masked
}

// Masked is what the command sees of the masked credentials: fake
// values in place of the real ones, which stay on the host.
type Masked struct {
	// Env maps a masked variable to the value the command gets. A masked
	// variable it does not name is not passed in at all.
	Env map[string]string
	// Files are fake files bound read-only over the real ones.
	Files []MaskedFile
	// TrustBundle is a host file of the certificates the command trusts
	// while cordon terminates TLS (its CA and the host's roots), bound at
	// TrustBundlePath and named by the variables TLS clients read; empty
	// when no TLS is terminated.
	TrustBundle string
}

// MaskedFile is a fake (a host file) bound over Path.
type MaskedFile struct {
	Path, Fake string
}

// TrustBundlePath is where the trust bundle is inside the sandbox.
const TrustBundlePath = "/.cordon/trust.pem"

// TrustVars are the variables that point TLS clients at a CA bundle:
// OpenSSL and Go (SSL_CERT_FILE), Node, Python's requests and pip, curl,
// git, the AWS CLI and SDKs, cargo, Deno, gcloud, and Nix's builds.
var TrustVars = []string{
	"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	"AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "PIP_CERT", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE",
}

// debugf tells Debug, when set.
func (r Request) debugf(format string, args ...any) {
	if r.Debug != nil {
		r.Debug(fmt.Sprintf(format, args...))
	}
}

// Record selects the file accesses whose refusals are recorded. Each one
// of them then stops for the runtime's seccomp supervisor (some 10-20µs),
// which is why they are not recorded by default: extracting the Go source
// tree (11,000 files) takes about four times as long with Writes. The
// refused system calls and connections are recorded always.
type Record struct {
	// Writes: changes to the file system refused by the sandbox's mounts
	// (read-only outside the writable roots, protected inside them).
	Writes bool
	// Reads: opens of denied (hidden) paths, and Writes. Every open stops.
	Reads bool
}

// Host are the files the runtime keeps on the host for a sandbox.
type Host struct {
	// Rootfs is the directory that becomes the sandbox's root: empty
	// mountpoints and copies of the host's top-level symlinks.
	Rootfs string
	// State is the runtime's state directory; it is hidden from the
	// sandbox.
	State string
	// Executable is cordon's own binary, mounted read-only at InitPath.
	Executable string
	// MaskFile is an empty file with mode 000 bound over denied files.
	MaskFile string
}

// ErrInvalid is wrapped by errors about a request or policy that cannot be
// compiled.
var ErrInvalid = errors.New("invalid sandbox request")

// Compile returns the OCI runtime spec that runs the request under the
// policy on a host with the probed capabilities.
func Compile(p *policy.Policy, req Request, pr probe.Result) (*specs.Spec, error) {
	opts, err := Opts(p, req, pr)
	if err != nil {
		return nil, err
	}
	s := Base()
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Opts returns the transformations that Compile applies to Base, in order.
func Opts(p *policy.Policy, req Request, pr probe.Result) ([]Opt, error) {
	if len(req.Args) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrInvalid)
	}
	if req.Mode == "" {
		req.Mode = ModeFull
	}
	if req.Mode != ModeFull && req.Mode != ModeContainer && req.Mode != ModeUnconfined {
		return nil, fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalid, req.Mode)
	}
	if !path.IsAbs(req.Cwd) {
		return nil, fmt.Errorf("%w: working directory %q is not absolute", ErrInvalid, req.Cwd)
	}
	fsys := req.FS
	if fsys == nil {
		fsys = mounts.HostFS()
	}
	plan, err := mountPlan(p, req, fsys)
	if err != nil {
		return nil, err
	}
	profile, guarded, err := seccompProfile(p, req, pr, plan.guard != nil)
	if err != nil {
		return nil, err
	}
	if !guarded || req.Mode == ModeUnconfined {
		plan.guard = nil
	}
	if req.Mode != ModeFull {
		return containerOpts(p, req, pr, plan, profile), nil
	}
	lims, res, rl := limits(p, pr, false)
	return []Opt{
		WithRoot(req.Host.Rootfs),
		WithProcess(p, req, profile != nil),
		WithCacheEnv(plan.env),
		WithLandlock(plan.landlock),
		WithLandlockStatus(pr),
		WithProxy(p, req),
		WithLimits(res, rl, lims),
		WithNamespaces(pr),
		WithIDMappings(req.UID, req.GID),
		WithCapabilities(Nested(req.UID, req.GID) || p.Sandbox.AllowNestedUserNamespaces),
		WithMounts(withHostProc(plan.mounts, req.HostProc)),
		WithProcMasks(),
		WithSeccomp(profile),
		WithCgroupsPath(pr, req.ID),
		WithAnnotations(map[string]string{
			AnnotationWorkspace: p.Workspace,
			AnnotationMode:      p.Mode.String(),
		}),
		withHostProcAnnotation(req.HostProc),
		WithScrub(plan.scrub),
		WithGuard(plan.guard),
	}, nil
}

// Base returns the spec every sandbox starts from: OCI version, Linux, no
// process yet.
func Base() *specs.Spec {
	return &specs.Spec{
		Version: specs.Version,
		Linux:   &specs.Linux{},
	}
}
