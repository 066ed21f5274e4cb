package shell

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"cordon.dev/cordon/internal/paths"
)

// Level is the permission a command requires. The policy package maps it
// onto its modes.
type Level int

const (
	// ReadOnly commands only read files and print.
	ReadOnly Level = iota
	// WorkspaceWrite commands change files inside the workspace (or the
	// other writable directories of the Context), build, test, install
	// into the project; unknown commands are here too.
	WorkspaceWrite
	// DangerFullAccess commands change the system or the user's account,
	// write or delete outside the workspace, run as another user, or run
	// code that cannot be known before it runs.
	DangerFullAccess
)

func (l Level) String() string {
	switch l {
	case ReadOnly:
		return "read-only"
	case WorkspaceWrite:
		return "workspace-write"
	case DangerFullAccess:
		return "danger-full-access"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Context is where the command runs. Paths are absolute; Classify cleans
// them and compares lexically (symbolic links are the sandbox's business).
type Context struct {
	Workspace string
	Home      string
	// Cwd is the working directory; the workspace when empty.
	Cwd string
	// Writable lists other directories where writing needs only
	// WorkspaceWrite: a sandbox-private /tmp, additional directories.
	Writable []string
	// Protected, when set, names what makes an absolute path one whose
	// writing needs DangerFullAccess though it lies where writing needs
	// only WorkspaceWrite (the agent's protected paths: .envrc, .husky/,
	// ...), or returns "".
	Protected func(path string) string
}

// Finding is one reason a command needs more than ReadOnly.
type Finding struct {
	// Command is the sub-command, as the shell would run it.
	Command string
	Level   Level
	// Reason says what the command does that needs Level.
	Reason string
}

func (f Finding) String() string { return f.Command + ": " + f.Reason }

// Classification is the level a script requires and why.
type Classification struct {
	Level    Level
	Findings []Finding
}

// Classify computes the level s requires in ctx. A script that does not
// parse, or any part of which is dynamic where it matters, requires
// DangerFullAccess.
func Classify(s *Script, ctx Context) Classification {
	ctx = ctx.clean()
	var cl Classification
	if s == nil {
		cl.add(Finding{Level: DangerFullAccess, Reason: "no command"})
		return cl
	}
	if s.Err != nil {
		cl.add(Finding{Command: abbrev(s.Source), Level: DangerFullAccess, Reason: "cannot be analysed: " + s.Err.Error()})
	}
	dyn := map[string]bool{}
	for _, c := range s.Commands {
		j := &judge{ctx: &ctx, c: c, dyn: dyn}
		j.run()
		for _, f := range j.findings {
			cl.add(f)
		}
	}
	return cl
}

func (cl *Classification) add(f Finding) {
	cl.Level = max(cl.Level, f.Level)
	for _, g := range cl.Findings {
		if g == f {
			return
		}
	}
	cl.Findings = append(cl.Findings, f)
}

func (ctx Context) clean() Context {
	c := func(p string) string {
		if p == "" {
			return ""
		}
		return path.Clean(p)
	}
	out := Context{Workspace: c(ctx.Workspace), Home: c(ctx.Home), Cwd: c(ctx.Cwd), Protected: ctx.Protected}
	if out.Cwd == "" {
		out.Cwd = out.Workspace
	}
	for _, w := range ctx.Writable {
		if w != "" {
			out.Writable = append(out.Writable, c(w))
		}
	}
	return out
}

// abbrev shortens a command for a finding.
func abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// judge classifies one simple command.
type judge struct {
	ctx      *Context
	c        *Command
	rendered string // the command for findings, once needed
	level    Level
	findings []Finding
	dyn      map[string]bool // dynamic reasons already reported
}

// need raises the command's level; levels above ReadOnly carry a reason.
func (j *judge) need(l Level, reason string) {
	j.level = max(j.level, l)
	if l == ReadOnly {
		return
	}
	f := Finding{Command: j.text(), Level: l, Reason: reason}
	if !slices.Contains(j.findings, f) {
		j.findings = append(j.findings, f)
	}
}

// floor raises a command to WorkspaceWrite with a general reason, unless
// a more precise one already explains it.
func (j *judge) floor(reason string) {
	if j.level >= WorkspaceWrite {
		return
	}
	j.need(WorkspaceWrite, reason)
}

// text is the command as findings name it.
func (j *judge) text() string {
	if j.rendered == "" {
		j.rendered = abbrev(j.c.String())
	}
	return j.rendered
}

func (j *judge) needf(l Level, format string, args ...any) {
	j.need(l, fmt.Sprintf(format, args...))
}

func (j *judge) run() {
	c := j.c
	if c.Dynamic != "" && !j.dyn[c.Dynamic] {
		j.dyn[c.Dynamic] = true
		j.need(DangerFullAccess, c.Dynamic)
	}
	for _, w := range c.Wrappers {
		j.wrapper(w)
	}
	for _, a := range c.Assigns {
		if why := riskyVar(a.Name, a.Value); why != "" {
			j.needf(DangerFullAccess, "%s set: %s", a.Name, why)
		}
	}
	for _, r := range c.Redirects {
		j.redirect(r)
	}
	if c.Name.Value == "" || c.Name.Dynamic {
		return
	}
	j.command()
	j.pipedScript()
}

// wrapper judges what a wrapper itself does.
func (j *judge) wrapper(w Wrapper) {
	name := w.Name
	if i := strings.IndexByte(name, ' '); i > 0 {
		name = name[:i]
	}
	switch name {
	case "sudo", "doas", "pkexec", "runuser", "su":
		j.need(DangerFullAccess, name+": runs as another user")
	case "sg":
		j.need(DangerFullAccess, "sg: runs with another group")
	case "chroot":
		j.need(DangerFullAccess, "chroot: changes the root directory (needs root)")
	case "nsenter", "unshare", "setpriv":
		j.need(DangerFullAccess, name+": changes namespaces or privileges")
	case "gosu", "su-exec":
		j.need(DangerFullAccess, name+": runs as another user")
	case "systemd-run":
		j.need(DangerFullAccess, "systemd-run: runs a command as a service outside the sandbox")
	case "fakeroot":
		j.need(WorkspaceWrite, "fakeroot: runs with a preloaded library")
	case "time", "strace", "ltrace":
		// /usr/bin/time -o FILE, strace -o FILE, ltrace -o FILE
		for i, a := range w.Args {
			if a.Value == "-o" && i+1 < len(w.Args) {
				j.write(w.Args[i+1], "writes", data)
			} else if v, ok := strings.CutPrefix(a.Value, "--output="); ok && name == "time" {
				j.write(Word{Value: v, Dynamic: a.Dynamic}, "writes", data)
			}
		}
	}
}

func (j *judge) redirect(r Redirect) {
	t := r.Target
	switch r.Op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		if t.Dynamic && (strings.HasPrefix(t.Value, ">(") || strings.HasPrefix(t.Value, "<(")) {
			return // a pipe to a process substitution, judged on its own
		}
		j.write(t, "redirect to", data)
	case ">&", "<&":
		if !t.Dynamic && (t.Value == "-" || isDigits(t.Value)) {
			return
		}
		if r.Op == ">&" {
			j.write(t, "redirect to", data)
		} else {
			j.read(t)
		}
	case "<":
		j.read(t)
	}
}

// read judges a file the command reads: only a network connection matters.
func (j *judge) read(w Word) {
	if !w.Dynamic && (strings.HasPrefix(w.Value, "/dev/tcp/") || strings.HasPrefix(w.Value, "/dev/udp/")) {
		j.needf(DangerFullAccess, "reads %s: opens a network connection", w.Value)
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// access is how a write touches its target.
type access int

const (
	data   access = iota // writes content: /dev/null and the like are harmless
	change               // creates, deletes, moves, links or changes metadata
)

// write judges a path the command writes, creates or deletes.
func (j *judge) write(w Word, verb string, a access) {
	paths, under, ok := j.resolve(w)
	if !ok {
		j.needf(DangerFullAccess, "%s %s: path known only at run time", verb, w.Value)
		return
	}
	for _, p := range paths {
		l, where := j.where(p, under, a)
		if l == WorkspaceWrite && j.ctx.Protected != nil {
			if why := j.ctx.Protected(p); why != "" {
				l, where = DangerFullAccess, why
			}
		}
		if l > ReadOnly {
			j.needf(l, "%s %s: %s", verb, w.Value, where)
		}
	}
}

// delete judges a path the command removes; recursive removal of the
// root, the home directory or the workspace itself is dangerous even
// where plain writes are not.
func (j *judge) delete(w Word, recursive bool, verb string) {
	paths, under, ok := j.resolve(w)
	if !ok {
		j.needf(DangerFullAccess, "%s %s: path known only at run time", verb, w.Value)
		return
	}
	for _, p := range paths {
		if recursive || under {
			if why := j.wholeTree(p, under, recursive); why != "" {
				j.needf(DangerFullAccess, "%s %s: %s", verb, w.Value, why)
				continue
			}
		}
		l, where := j.where(p, under, change)
		if l > ReadOnly {
			j.needf(l, "%s %s: %s", verb, w.Value, where)
		}
	}
}

// wholeTree names a recursive target that takes a root with it.
func (j *judge) wholeTree(p string, under, recursive bool) string {
	ws, home := j.ctx.Workspace, j.ctx.Home
	switch {
	case p == "/":
		if under {
			return "everything under the file system root"
		}
		return "the file system root"
	case home != "" && p == home:
		return "the home directory"
	case ws != "" && p == ws && recursive:
		return "the whole workspace"
	case ws != "" && p != ws && paths.Under(ws, p):
		return "a directory containing the workspace"
	}
	return ""
}

// resolve turns a path word into absolute paths, one per directory the
// command may run in. under reports a dynamic word known to stay below the
// returned directories.
func (j *judge) resolve(w Word) (paths []string, under, ok bool) {
	v, home := w.Value, w.Home
	if w.Dynamic {
		if w.Base == "" {
			return nil, false, false
		}
		v, home, under = w.Base, strings.HasPrefix(w.Base, "~"), true
	}
	switch {
	case home:
		if j.ctx.Home == "" {
			return nil, false, false
		}
		return []string{path.Clean(j.ctx.Home + "/" + strings.TrimPrefix(v, "~"))}, under, true
	case path.IsAbs(v):
		return []string{path.Clean(v)}, under, true
	}
	dirs, ok := j.dirs()
	if !ok {
		return nil, false, false
	}
	for _, d := range dirs {
		p := path.Clean(d + "/" + v)
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, under, true
}

// dirs are the absolute directories the command may run in.
func (j *judge) dirs() ([]string, bool) {
	c := j.c
	if c.DirsUnknown || j.ctx.Cwd == "" {
		return nil, false
	}
	if c.Dirs == nil {
		return []string{j.ctx.Cwd}, true
	}
	var out []string
	for _, d := range c.Dirs {
		switch {
		case d == "":
			out = append(out, j.ctx.Cwd)
		case path.IsAbs(d):
			out = append(out, d)
		case strings.HasPrefix(d, "~"):
			if j.ctx.Home == "" {
				return nil, false
			}
			out = append(out, path.Clean(j.ctx.Home+"/"+strings.TrimPrefix(d, "~")))
		default:
			out = append(out, path.Clean(j.ctx.Cwd+"/"+d))
		}
	}
	return out, true
}

// where says what writing p needs. under means entries below p.
func (j *judge) where(p string, under bool, a access) (Level, string) {
	if a == data && harmlessDevice(p) {
		return ReadOnly, ""
	}
	if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
		return DangerFullAccess, "opens a network connection"
	}
	if why := j.protected(p); why != "" {
		return DangerFullAccess, why
	}
	if under && j.ctx.Home != "" && p == j.ctx.Home {
		return DangerFullAccess, "the home directory, shell startup files included"
	}
	if j.ctx.Workspace != "" && paths.Under(p, j.ctx.Workspace) {
		return WorkspaceWrite, "in the workspace"
	}
	for _, w := range j.ctx.Writable {
		if paths.Under(p, w) {
			return WorkspaceWrite, "in " + w
		}
	}
	switch {
	case p == "/":
		return DangerFullAccess, "the file system root"
	case p == "/dev" || strings.HasPrefix(p, "/dev/"):
		return DangerFullAccess, "a device"
	case p == "/proc" || strings.HasPrefix(p, "/proc/") || p == "/sys" || strings.HasPrefix(p, "/sys/"):
		return DangerFullAccess, "a kernel interface"
	}
	for _, s := range systemDirs {
		if paths.Under(p, s) {
			return DangerFullAccess, "a system path outside the workspace"
		}
	}
	return DangerFullAccess, "outside the workspace"
}

// systemDirs are the roots of the operating system's own files.
var systemDirs = []string{"/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/root", "/opt", "/srv", "/System", "/Library", "/private/etc", "/private/var"}

func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/random", "/dev/urandom":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") && isDigits(strings.TrimPrefix(p, "/dev/fd/"))
}

// protected names the files that run code or grant permissions outside the
// sandbox when written, wherever they are.
func (j *judge) protected(p string) string {
	if h := j.ctx.Home; h != "" && paths.Under(p, h) && p != h {
		rel := strings.TrimPrefix(p, h+"/")
		for _, f := range homeFiles {
			if rel == f.name || strings.HasSuffix(f.name, "/") && strings.HasPrefix(rel+"/", f.name) {
				return f.why
			}
		}
	}
	comps := strings.Split(p, "/")
	for i, c := range comps {
		rest := strings.Join(comps[i:], "/")
		switch {
		case c == ".git" && i+1 < len(comps) && comps[i+1] == "hooks":
			return "git hooks run code outside the sandbox"
		case rest == ".git/config":
			return "git config can make git run commands"
		case c == ".cordon" || rest == ".claude/settings.json" || rest == ".claude/settings.local.json" || rest == ".srt-settings.json":
			return "changes the agent's permission settings"
		case rest == ".mcp.json":
			return "configures the MCP servers the agent starts"
		case c == ".vscode" || c == ".idea":
			return "editor configuration can run tasks outside the sandbox"
		case rest == ".gitmodules":
			return "submodule configuration"
		}
	}
	return ""
}

// homeFiles are protected paths relative to the home directory; a trailing
// slash protects a directory.
var homeFiles = []struct{ name, why string }{
	{".bashrc", "a shell startup file"},
	{".bash_profile", "a shell startup file"},
	{".bash_login", "a shell startup file"},
	{".bash_logout", "a shell startup file"},
	{".profile", "a shell startup file"},
	{".zshrc", "a shell startup file"},
	{".zshenv", "a shell startup file"},
	{".zprofile", "a shell startup file"},
	{".zlogin", "a shell startup file"},
	{".zlogout", "a shell startup file"},
	{".kshrc", "a shell startup file"},
	{".mkshrc", "a shell startup file"},
	{".cshrc", "a shell startup file"},
	{".tcshrc", "a shell startup file"},
	{".inputrc", "a shell startup file"},
	{".config/fish/", "a shell startup file"},
	{".ssh/", "SSH keys and configuration"},
	{".gnupg/", "GnuPG keys"},
	{".aws/", "cloud credentials"},
	{".config/gcloud/", "cloud credentials"},
	{".kube/", "cluster credentials"},
	{".docker/", "container registry credentials"},
	{".netrc", "credentials"},
	{".npmrc", "registry credentials"},
	{".pypirc", "registry credentials"},
	{".git-credentials", "credentials"},
	{".gitconfig", "git configuration can make git run commands"},
	{".config/git/", "git configuration can make git run commands"},
	{".claude/", "changes the agent's settings"},
	{".claude.json", "changes the agent's settings"},
	{".config/cordon/", "changes the agent's permission settings"},
	{".srt-settings.json", "changes the agent's permission settings"},
	{".config/autostart/", "runs programs at login"},
	{".config/systemd/", "runs services outside the sandbox"},
	{"Library/LaunchAgents/", "runs programs at login"},
}
