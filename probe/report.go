package probe

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is a Result with its Verdict: what `cordon doctor --json` prints,
// the Result's keys and the Verdict's at the top level.
type Report struct {
	Result
	Verdict
}

// NewReport assesses r.
func NewReport(r Result) Report {
	diagnose(&r)
	return Report{Result: r, Verdict: Assess(r)}
}

// Line is one feature as doctor shows it.
type Line struct {
	// Status is "ok", "missing", "degraded", "untested" (informational
	// features that could not be tried) or "info".
	Status string
	// Name is the feature's name for people.
	Name string
	// Detail says what was found, or why it failed.
	Detail string
}

// Lines are the report's feature lines, in the order of checks.
func (rep Report) Lines() []Line {
	r := rep.Result
	var out []Line
	for _, c := range checks {
		f := *c.get(&r)
		l := Line{Status: "ok", Name: c.name}
		switch {
		case f.Step == StepUntested:
			l.Status, l.Detail = "untested", f.Error
		case !f.Available:
			l.Status, l.Detail = "missing", failure(f)
		}
		switch c.key {
		case "seccomp":
			if f.Available {
				l.Detail = "actions: " + actionNames(r.Seccomp.Actions)
			}
		case "landlock":
			if f.Available {
				l.Detail = fmt.Sprintf("ABI %d", r.Landlock.ABI)
			}
		case "cgroups.create":
			l.Detail = cgroupDetail(r, f)
			if f.Available && !r.CgroupLimits(limitControllers...) {
				l.Status = "degraded"
			}
		}
		out = append(out, l)
	}
	if r.Cgroups.Create.Available {
		l := Line{Status: "info", Name: "favordynmods", Detail: "on"}
		if !r.Cgroups.FavorDynmods {
			l.Detail = "off: a sandbox joining its cgroups waits for an RCU grace period (docs/performance.md)"
		}
		out = append(out, l)
	}
	if r.Host.AnonFolios != nil {
		l := Line{Status: "info", Name: "anon folios", Detail: strings.Join(r.Host.AnonFolios, ", ")}
		if len(r.Host.AnonFolios) == 0 {
			l.Detail = "single pages: a cold run takes about twice the page faults it would with 64 kB folios (docs/performance.md)"
		}
		out = append(out, l)
	}
	lib := Line{Status: "info", Name: "libseccomp", Detail: "not linked"}
	if r.Libseccomp.Version != "" {
		lib.Detail = fmt.Sprintf("%s (API level %d)", r.Libseccomp.Version, r.Libseccomp.API)
	}
	return append(out, lib)
}

func failure(f Feature) string {
	var parts []string
	if f.Step != "" {
		parts = append(parts, f.Step)
	}
	switch {
	case f.Errno != "":
		parts = append(parts, f.Errno)
	case f.Error != "":
		parts = append(parts, f.Error)
	}
	s := strings.Join(parts, ": ")
	if f.Cause != "" && f.Cause != CauseUnknown {
		s += " (" + f.Cause + ")"
	} else if f.Errno != "" && f.Error != "" {
		s += " (" + f.Error + ")"
	}
	return s
}

func actionNames(actions []string) string {
	var names []string
	for _, a := range actions {
		names = append(names, strings.ToLower(strings.TrimPrefix(a, "SCMP_ACT_")))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " ")
}

func cgroupDetail(r Result, f Feature) string {
	c := r.Cgroups
	s := c.Layout
	switch {
	case len(c.Parents) == 1:
		s += "; sandboxes under " + c.Parents[0]
	case len(c.Parents) > 1:
		s += fmt.Sprintf("; sandboxes under %s and %d more", c.Parents[0], len(c.Parents)-1)
	}
	if f.Available {
		ctrls := strings.Join(c.Controllers, " ")
		if ctrls == "" {
			ctrls = "none"
		}
		return s + "; controllers: " + ctrls
	}
	return s + "; " + failure(f)
}

// WriteText writes the report for people: a header, one line per feature,
// the verdict, the protections lost and the fixes.
func (rep Report) WriteText(w io.Writer) error {
	r := rep.Result
	var b strings.Builder
	who := fmt.Sprintf("uid %d", r.EUID)
	if r.Root() {
		who = "root"
	}
	fmt.Fprintf(&b, "cordon doctor: %s, Linux %s %s", who, r.Kernel, r.Arch)
	if r.Container.Kind != "" {
		fmt.Fprintf(&b, ", in a %s (%s)", containerName(&r), strings.Join(r.Container.Evidence, "; "))
	}
	b.WriteString("\n\n")
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 8, 2, ' ', 0)
	for _, l := range rep.Lines() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Status, l.Name, l.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	switch rep.Level {
	case Full:
		b.WriteString("verdict: full sandbox\n")
	case Degraded:
		b.WriteString("verdict: degraded sandbox; lost:\n")
	case ContainerMode:
		b.WriteString("verdict: container mode: no namespaces here, commands are confined by Landlock and seccomp; lost, compared with the full sandbox:\n")
	case Unavailable:
		b.WriteString("verdict: unavailable: cordon cannot sandbox commands here; lost:\n")
	}
	for _, l := range rep.Lost {
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	if rep.HostProc {
		b.WriteString("\nthe full sandbox works here but for a fresh /proc: sandbox.enableWeakerNestedSandbox binds the host's /proc instead (the command then sees the host's processes)\n")
	}
	if rep.Level == ContainerMode {
		b.WriteString("\nthe full sandbox comes back with the fixes below; cordon.requireFullSandbox (or sandbox.failIfUnavailable) refuses to run without it\n")
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(&b, "\n%s: %s\n", strings.Join(p.Features, ", "), p.Message)
		for _, f := range p.Fixes {
			fmt.Fprintf(&b, "  fix (%s):", f.On)
			if f.Command != "" {
				fmt.Fprintf(&b, "\n      %s", f.Command)
			}
			if f.Note != "" {
				sep := "\n      # "
				if f.Command == "" {
					sep = " "
				}
				b.WriteString(sep + f.Note)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	if r.Cached {
		fmt.Fprintf(&b, "cached result of %s (probed in %.0f ms); --fresh probes again\n",
			r.ProbedAt.Format("2006-01-02 15:04:05 MST"), r.ProbeMillis)
	} else {
		fmt.Fprintf(&b, "probed in %.0f ms\n", r.ProbeMillis)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
