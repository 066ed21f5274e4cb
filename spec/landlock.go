package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/mounts"
	"cordon.dev/cordon/probe"
)

// AnnotationLandlock is a JSON list of LandlockRule: the Landlock ruleset
// cordon's init applies to the command as a second layer under the mounts
// (the OCI spec has no Landlock field). A path no rule covers is neither
// readable nor writable, whatever the mounts say.
const AnnotationLandlock = "dev.cordon.landlock"

// AnnotationLandlockStatus says whether the init's Landlock layer is active
// on the machine the spec is compiled for: "ABI N" (the kernel's Landlock
// ABI, as far as which the rules are applied), "unavailable" (the kernel
// has none: the mounts are the only file-system layer, see cordon doctor)
// or "not probed".
const AnnotationLandlockStatus = "dev.cordon.landlock.status"

// InitLandlockFD is the descriptor from which the init reads the Landlock
// rules: for each, its access ("r", "w" or "l"), a NUL, the path, a NUL.
const InitLandlockFD = 5

// LandlockRule grants access beneath a path: "r" read and execute, "w"
// everything a file system allows, "l" listing directories only (for the
// directories on the way to a denied path: `ls ~` keeps working, the denied
// path's content stays out of reach). In the container mode, "connect" and
// "bind" grant a TCP port, the Path (Landlock ABI 4).
//
// A rule whose Access begins with "=" is a check, not a grant: before the
// command starts, the init verifies that Path, reached without following
// a symlink, is what the mount plan resolved (see mounts.Check), and
// refuses to run anything otherwise: "=same:DEV:INO" (that file),
// "=ro:DEV:INO" (that file, on a read-only mount), "=mask" (the empty,
// mode-000 mask file on a read-only mount), "=tmpfs" (a read-only tmpfs
// directory of mode 000 or 111). They travel with the Landlock rules
// because the init reads its file-system rules from one descriptor.
type LandlockRule struct {
	Path   string `json:"path"`
	Access string `json:"access"`
}

// systemWritable are the sandbox's own writable places.
var systemWritable = []string{"/tmp", "/dev", "/proc"}

// landlockRules derives the ruleset from the policy's result: the system's
// writable places (system) and the writable roots get "w"; everything else readable gets "r" — except the denied paths
// outside the writable roots, which are left out by granting their
// siblings instead of an ancestor ("the complement"). A denied path that
// does not exist yet is thus unreadable should it appear, and a mistake in
// the mount plan alone opens nothing. Denials inside a writable root rest
// on the mounts alone: Landlock cannot take a path out of a grant, and
// granting a writable root's siblings one by one would stop the command
// from creating files in it.
func landlockRules(fsys fs.FS, system, writable, denied, allowRead []string) ([]LandlockRule, error) {
	rw := append(slices.Clone(system), writable...)
	var outside []string
	for _, d := range denied {
		if real, _, err := mounts.Resolve(fsys, d); err == nil {
			d = real
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return nil, err
		}
		if !slices.ContainsFunc(rw, func(w string) bool { return paths.Under(d, w) }) {
			outside = append(outside, d)
		}
	}
	var rules []LandlockRule
	isDenied := func(p string) bool { return slices.Contains(outside, p) }
	hasDeniedBelow := func(p string) bool {
		return slices.ContainsFunc(outside, func(d string) bool { return paths.Below(d, p) })
	}
	var grant func(dir string) error
	grant = func(dir string) error {
		rules = append(rules, LandlockRule{Path: dir, Access: "l"})
		entries, err := fs.ReadDir(fsys, fsName(dir))
		if err != nil {
			// An unreadable directory gets no rule: nothing in it is
			// granted, which is what the host allows anyway.
			return nil
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			switch {
			case isDenied(p):
			case e.IsDir() && hasDeniedBelow(p):
				if err := grant(p); err != nil {
					return err
				}
			default:
				rules = append(rules, LandlockRule{Path: p, Access: "r"})
			}
		}
		return nil
	}
	switch {
	case isDenied("/"):
	case hasDeniedBelow("/"):
		if err := grant("/"); err != nil {
			return nil, err
		}
	default:
		rules = append(rules, LandlockRule{Path: "/", Access: "r"})
	}
	for _, a := range allowRead {
		rules = append(rules, LandlockRule{Path: a, Access: "r"})
	}
	for _, w := range rw {
		rules = append(rules, LandlockRule{Path: w, Access: "w"})
	}
	return rules, nil
}

// checkRules turns the mount plan's checks into the init's check records.
func checkRules(cs []mounts.Check) []LandlockRule {
	var out []LandlockRule
	for _, c := range cs {
		access := "=" + c.Kind
		if c.Kind == mounts.CheckSame || c.Kind == mounts.CheckReadOnly {
			access += fmt.Sprintf(":%d:%d", c.Identity.Dev, c.Identity.Ino)
		}
		out = append(out, LandlockRule{Path: c.Path, Access: access})
	}
	return out
}

// WithLandlock records the ruleset and tells the init to apply it.
func WithLandlock(rules []LandlockRule) Opt {
	return func(s *specs.Spec) error {
		if len(rules) == 0 {
			return nil
		}
		if s.Process == nil {
			return fmt.Errorf("%w: landlock before process", ErrInvalid)
		}
		data, err := json.Marshal(rules)
		if err != nil {
			return err
		}
		if err := WithAnnotations(map[string]string{AnnotationLandlock: string(data)})(s); err != nil {
			return err
		}
		i := slices.Index(s.Process.Args, "--")
		if i < 0 {
			return fmt.Errorf("%w: the process does not run cordon's init", ErrInvalid)
		}
		s.Process.Args = slices.Insert(s.Process.Args, i, fmt.Sprintf("--landlock-fd=%d", InitLandlockFD))
		return nil
	}
}

// WithLandlockStatus records whether the Landlock rules will be enforced
// (AnnotationLandlockStatus), for `cordon spec` to show.
func WithLandlockStatus(pr probe.Result) Opt {
	return func(s *specs.Spec) error {
		if s.Annotations[AnnotationLandlock] == "" {
			return nil
		}
		status := "not probed"
		switch {
		case pr.ProbedAt.IsZero():
		case pr.LandlockABI() > 0:
			status = fmt.Sprintf("ABI %d", pr.LandlockABI())
		default:
			status = "unavailable"
		}
		return WithAnnotations(map[string]string{AnnotationLandlockStatus: status})(s)
	}
}

// EncodeLandlock writes the rules in the init's format (InitLandlockFD).
func EncodeLandlock(rules []LandlockRule) []byte {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(r.Access)
		b.WriteByte(0)
		b.WriteString(r.Path)
		b.WriteByte(0)
	}
	return []byte(b.String())
}
