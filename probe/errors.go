package probe

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is wrapped by Verdict.Err when no sandbox can be built
// here.
var ErrUnavailable = errors.New("sandbox unavailable")

// Err returns nil unless the verdict is Unavailable, and then an error
// wrapping ErrUnavailable that names what is missing and why, for a run
// that must refuse (failIfUnavailable): "sandbox unavailable:
// userNamespaces, mountNamespace: AppArmor restricts ... (cordon doctor
// shows the fix)".
func (v Verdict) Err() error {
	if v.Level != Unavailable {
		return nil
	}
	var parts, container []string
	for _, p := range v.Problems {
		if p.Effect == Unavailable {
			parts = append(parts, strings.Join(p.Features, ", ")+": "+p.Message)
		}
		// What keeps the container mode, the fallback, from running.
		for _, f := range p.Features {
			if f == "landlock" || f == "seccomp" || f == "libseccomp" {
				container = append(container, f+": "+p.Message)
			}
		}
	}
	msg := strings.Join(parts, "; ")
	if len(container) > 0 {
		msg += "; and the container mode needs Landlock and seccomp: " + strings.Join(container, "; ")
	}
	return fmt.Errorf("%w: %s (cordon doctor shows the fix; cordon.acceptUnconfined runs commands unconfined instead)", ErrUnavailable, msg)
}
