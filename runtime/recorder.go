//go:build unix

package runtime

import (
	"fmt"
	"strings"

	"cordon.dev/cordon/netproxy"
)

// Recorder keeps the violations of a run that Run does not carry out
// itself — on macOS, where sandbox-exec runs the command and the unified
// log reports what it refused — and, once the run is over, records them
// in the store and notes them as Run does: the same repeats dropped, the
// same ignoreViolations, the same bound, the same end-of-run note.
type Recorder struct {
	o   Options
	rec *recorder
}

// NewRecorder starts the record of the run o.ID. It uses o.Meta (command
// line and workspace), o.Ignore, o.Store and o.Notify as Run does.
func NewRecorder(o Options) *Recorder {
	return &Recorder{o: o, rec: newRecorder(o.ID, strings.Join(o.Meta.Args, " "), o.Meta.Workspace, o.Ignore)}
}

// Add records v, stamped with the run and its workspace (and the time,
// when it has none), unless it is ignored or a repeat. It may be called
// from any goroutine.
func (r *Recorder) Add(v Violation) { r.rec.add(v) }

// Decision records a connection the proxy refused; it is a
// netproxy.Config.OnDecision.
func (r *Recorder) Decision(d netproxy.Decision) {
	if !d.Allowed && d.Reason != "" {
		r.rec.add(NetworkViolation(d))
	}
}

// NetworkViolation is the record of a connection the proxy refused.
func NetworkViolation(d netproxy.Decision) Violation {
	v := Violation{Kind: KindNetwork, Host: d.Host, Port: d.Port, Reason: d.Rule}
	if entry := d.AllowEntry(); entry != "" {
		v.Hint = "allow with --allow-domain " + entry + " or sandbox.network.allowedDomains"
	}
	return v
}

// CredentialViolation is the record of a masked credential the proxy saw
// on the wire.
func CredentialViolation(u netproxy.CredentialUse) Violation {
	v := Violation{Kind: KindCredential, Host: u.Host, Port: u.Port, Credential: u.Name, Substituted: u.Substituted}
	switch {
	case u.Substituted && u.TLS:
		v.Reason = "among its injectHosts, over TLS whose server cordon verified"
	case u.Substituted:
		v.Reason = "among its injectHosts, over plain HTTP (credentials.allowPlaintextInject)"
	case !u.Own:
		v.Reason = "not among its injectHosts: its fake went out"
		v.Hint = "add the host to the credential's injectHosts if it is to get the real value"
	default:
		v.Reason = "plain HTTP: the real value goes only over TLS, and its fake went out"
		v.Hint = "use https://, or credentials.allowPlaintextInject"
	}
	return v
}

// Finish ends the record once the command has ended: the violations go to
// the store, and the note about them to o.Notify. A store that cannot be
// written is noted, and changes nothing else.
func (r *Recorder) Finish() {
	vs, dropped := r.rec.violations()
	if len(vs) == 0 {
		return
	}
	dir := r.o.Store
	if dir == "" {
		dir = StoreDir()
	}
	notify := func(msg string) {
		if r.o.Notify != nil {
			r.o.Notify(msg)
		}
	}
	if err := AppendViolations(dir, vs); err != nil {
		notify(fmt.Sprintf("could not record what the sandbox refused: %v", err))
	}
	for _, n := range notes(r.o.ID, vs, dropped) {
		notify(n)
	}
}
