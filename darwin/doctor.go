package darwin

import (
	"fmt"
	"io"
	"io/fs"
	"text/tabwriter"

	"cordon.dev/cordon/policy"
)

// Finding is one line of `cordon doctor` on macOS.
type Finding struct {
	// Status is "ok", "missing" or "info", as on Linux.
	Status string `json:"status"`
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// Diagnosis is what `cordon doctor` reports on macOS: whether a run can
// be sandboxed, and what a run under the policy loses.
type Diagnosis struct {
	// Verdict is "full" when sandbox-exec is there, else "unavailable".
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`
}

// Diagnose checks the programs a run needs (stat, the host's root: os.Stat
// through an fs.FS) and says what the policy p leaves closed that ordinary
// work may need. p may be nil when the settings could not be read.
func Diagnose(stat func(name string) (fs.FileInfo, error), p *policy.Policy) Diagnosis {
	d := Diagnosis{Verdict: "full"}
	executable := func(name string) bool {
		fi, err := stat(name)
		return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	}
	if executable(SandboxExec) {
		d.Findings = append(d.Findings, Finding{Status: "ok", Name: "sandbox-exec", Detail: SandboxExec})
	} else {
		d.Verdict = "unavailable"
		d.Findings = append(d.Findings, Finding{Status: "missing", Name: "sandbox-exec", Detail: SandboxExec + " is not an executable file: nothing can be sandboxed"})
	}
	if executable(LogCommand) {
		d.Findings = append(d.Findings, Finding{Status: "ok", Name: "refusal records", Detail: LogCommand + " stream (an admin account: a standard one cannot stream the log, and its refusals are not recorded)"})
	} else {
		d.Findings = append(d.Findings, Finding{Status: "missing", Name: "refusal records", Detail: LogCommand + " is not there: refusals are not recorded"})
	}
	d.Findings = append(d.Findings, trustCheck(p))
	d.Findings = append(d.Findings, Finding{Status: "info", Name: "limits",
		Detail: "fileSize and openFiles are enforced (rlimits); memory, pids, cpus and tmpSize are not"})
	return d
}

// trustCheck says whether TLS verification through the system trust
// store works in a run, and what fails when it does not.
func trustCheck(p *policy.Policy) Finding {
	c := Finding{Status: "info", Name: "TLS verification (trustd)"}
	switch {
	case p == nil:
		c.Detail = "not known: the settings could not be read"
	case !networkOn(p):
		c.Detail = "not needed: the policy allows no domain"
	case p.Sandbox.EnableWeakerNetworkIsolation:
		c.Detail = "open (sandbox.enableWeakerNetworkIsolation): trustd may fetch what a certificate names from any host, past the domain filter"
	default:
		c.Detail = "closed: Go programs (gh, terraform, kubectl, go), Rust's native-tls and Swift fail HTTPS with \"x509: OSStatus -26276\"; " +
			"curl, Python and Node verify on their own. sandbox.enableWeakerNetworkIsolation opens it, and with it a way past the domain filter"
	}
	return c
}

// WriteText prints the diagnosis as `cordon doctor` does.
func (d Diagnosis) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range d.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "full sandbox (Seatbelt)"
	if d.Verdict != "full" {
		verdict = "no sandbox: " + SandboxExec + " is missing"
	}
	_, err := fmt.Fprintf(w, "\nverdict: %s\n", verdict)
	return err
}
