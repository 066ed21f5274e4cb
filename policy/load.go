package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultManagedFiles are the managed settings files, highest precedence:
// cordon's own and Claude Code's.
var DefaultManagedFiles = []string{
	"/etc/cordon/managed-settings.json",
	"/etc/claude-code/managed-settings.json",
	"/Library/Application Support/ClaudeCode/managed-settings.json",
}

// LoadOptions says where Load looks for settings and what the command
// line says.
type LoadOptions struct {
	// Workspace is the directory the command may write to; Cwd the
	// directory it runs in; Home the caller's home. All absolute.
	Workspace, Cwd, Home string
	// ConfigHome is $XDG_CONFIG_HOME ("" means Home/.config).
	ConfigHome string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR, where Claude Code keeps the
	// user's settings.json instead of ~/.claude ("" means Home/.claude;
	// a relative one is relative to Cwd).
	ClaudeConfigDir string
	// Settings are the --settings files, in order.
	Settings []string
	// Flags are the command line's other settings.
	Flags Flags
	// ManagedFiles replaces DefaultManagedFiles (tests).
	ManagedFiles []string
	// NoDiscovery reads no settings file but the Settings: the embedded
	// default policy and the command line alone.
	NoDiscovery bool
	// FS is the file system settings are read from, rooted at "/"; nil
	// means the real one.
	FS fs.FS
}

// Flags are the settings given on the command line.
type Flags struct {
	AllowWrite, DenyRead, DenyWrite, AllowRead []string
	AllowDomain, DenyDomain                    []string
	Mode                                       string
	// Limits, as written on the command line ("2G", "50%", "90s", "1024");
	// empty means unset.
	Memory, Pids, CPUs, Timeout, OutputLimit, FileSize, OpenFiles, TmpSize string
	// Serve, "true", makes cordon.serve true unless a settings file sets
	// it (cordon run --serve, which cordon hook claude passes): a default,
	// under every file, not a layer above them.
	Serve string
}

// Load discovers the settings files for a workspace, reads them, checks
// them and merges them, with the embedded default policy at the bottom:
//
//  1. managed: /etc/cordon/managed-settings.json, Claude Code's managed file,
//     each followed by the *.json files of its managed-settings.d;
//  2. the command line: --settings FILE, then the other flags;
//  3. WORKSPACE/.claude/settings.local.json, WORKSPACE/.cordon/settings.local.json;
//  4. WORKSPACE/.claude/settings.json, WORKSPACE/.cordon/settings.json;
//  5. ~/.srt-settings.json, ~/.claude/settings.json, ~/.config/cordon/settings.json.
//
// Lists are merged (union); a scalar takes the value of the highest source.
// Settings files inside a workspace the user has not trusted (cordon trust)
// may only tighten the sandbox. Any error — a file that cannot be read, bad
// JSON, an unknown key, a wrong type, a bad entry — is returned with its
// file:line:col, and no Policy: nothing may run on a policy that could not
// be read.
func Load(o LoadOptions) (*Policy, error) {
	in, err := discover(o)
	if err != nil {
		return nil, err
	}
	return in.load()
}

// candidate is a settings file Load looks for.
type candidate struct {
	path   string
	scope  Scope
	format format
	base   string
}

// inputs are everything a Load reads: the options, every candidate
// settings file with what reading it gave, and the workspace's real path.
type inputs struct {
	o     LoadOptions
	cands []candidate
	// data and errs are what reading each candidate gave.
	data [][]byte
	errs []error
	// real is the workspace with its symlinks resolved (for trust).
	real string
	// claudeDir is Claude Code's configuration directory.
	claudeDir string
}

// managedDropIns are the files of Claude Code's drop-in directory dir:
// every *.json file beside the managed file, read after it, in
// alphabetical order (a later file's scalar wins), hidden files ignored.
func managedDropIns(fsys fs.FS, dir, base string) ([]candidate, error) {
	entries, err := fs.ReadDir(fsys, strings.TrimPrefix(filepath.Clean(dir), "/"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &SettingsError{File: dir, Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err))}
	}
	var out []candidate
	for _, e := range entries {
		if name := e.Name(); !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".json") {
			out = append(out, candidate{filepath.Join(dir, name), ScopeManaged, formatClaude, base})
		}
	}
	return out, nil
}

// fsys is the file system the settings are read from: FS, or the host's.
func (o LoadOptions) fsys() fs.FS {
	if o.FS == nil {
		return hostFS{}
	}
	return o.FS
}

// discover finds the candidate settings files for o and reads them.
func discover(o LoadOptions) (*inputs, error) {
	if !filepath.IsAbs(o.Workspace) || !filepath.IsAbs(o.Home) || !filepath.IsAbs(o.Cwd) {
		return nil, fmt.Errorf("%w: workspace, cwd and home must be absolute", ErrSettings)
	}
	o.Workspace, o.Home, o.Cwd = filepath.Clean(o.Workspace), filepath.Clean(o.Home), filepath.Clean(o.Cwd)
	if o.ConfigHome == "" {
		o.ConfigHome = filepath.Join(o.Home, ".config")
	}
	managed := o.ManagedFiles
	if managed == nil {
		managed = DefaultManagedFiles
	}

	ws := o.Workspace
	claudeDir := filepath.Join(o.Home, ".claude")
	if d := o.ClaudeConfigDir; d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(o.Cwd, d)
		}
		claudeDir = filepath.Clean(d)
	}
	cands := []candidate{
		{filepath.Join(o.Home, ".srt-settings.json"), ScopeUser, formatSRT, ""},
		// Claude Code's "/x" in the user's file is in ~/.claude.
		{filepath.Join(claudeDir, "settings.json"), ScopeUser, formatClaude, claudeDir},
		{filepath.Join(o.ConfigHome, "cordon", "settings.json"), ScopeUser, formatCordon, o.Home},
		{filepath.Join(ws, ".claude", "settings.json"), ScopeProject, formatClaude, ws},
		{filepath.Join(ws, ".cordon", "settings.json"), ScopeProject, formatCordon, ws},
		{filepath.Join(ws, ".claude", "settings.local.json"), ScopeLocal, formatClaude, ws},
		{filepath.Join(ws, ".cordon", "settings.local.json"), ScopeLocal, formatCordon, ws},
	}
	// With the home as the workspace, ~/.claude/settings.json is the
	// user's file: read once, as such.
	cands = slices.DeleteFunc(cands, func(c candidate) bool {
		return (c.scope == ScopeProject || c.scope == ScopeLocal) && slices.ContainsFunc(cands, func(u candidate) bool {
			return u.scope == ScopeUser && u.path == c.path
		})
	})
	for _, f := range o.Settings {
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(o.Cwd, f)
		}
		cands = append(cands, candidate{abs, ScopeFlag, formatFlagFile(abs), filepath.Dir(abs)})
	}
	fsys := o.fsys()
	for _, f := range managed {
		// Claude Code's "/x" in its managed files is in the project;
		// cordon's own managed file keeps "/x" absolute.
		base := ws
		if filepath.Dir(f) == "/etc/cordon" {
			base = "/"
		}
		cands = append(cands, candidate{f, ScopeManaged, formatClaude, base})
		if filepath.Base(f) != "managed-settings.json" {
			continue
		}
		dropIns, err := managedDropIns(fsys, filepath.Join(filepath.Dir(f), "managed-settings.d"), base)
		if err != nil {
			return nil, err
		}
		cands = append(cands, dropIns...)
	}
	if o.NoDiscovery {
		cands = slices.DeleteFunc(cands, func(c candidate) bool { return c.scope != ScopeFlag })
	}
	in := &inputs{o: o, cands: cands, data: make([][]byte, len(cands)), errs: make([]error, len(cands)), real: ws, claudeDir: claudeDir}
	for i, c := range cands {
		owned := c.scope == ScopeUser || c.scope == ScopeManaged
		in.data[i], in.errs[i] = readSettings(fsys, strings.TrimPrefix(filepath.Clean(c.path), "/"), owned)
	}
	if o.FS == nil {
		if r, err := filepath.EvalSymlinks(ws); err == nil {
			in.real = r
		}
	}
	return in, nil
}

// load checks and merges what discover read.
func (in *inputs) load() (*Policy, error) {
	o, cands, ws := in.o, in.cands, in.o.Workspace
	def, err := readLayer(defaultSettingsName, defaultSettings, ScopeDefault, formatCordon, o, "/")
	if err != nil {
		return nil, fmt.Errorf("embedded default settings: %w", err)
	}
	layers := []*layer{def}
	rep := &Report{}
	for i, c := range cands {
		data, err := in.data[i], in.errs[i]
		if errors.Is(err, fs.ErrNotExist) && c.scope != ScopeFlag {
			continue
		}
		if err != nil {
			return nil, &SettingsError{File: c.path, Msg: fmt.Sprintf("cannot read: %v", unwrapPathError(err))}
		}
		l, err := readLayer(c.path, data, c.scope, c.format, o, c.base)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
		rep.Files = append(rep.Files, FileReport{Path: c.path, Scope: c.scope.String()})
	}
	flags, err := flagLayer(o)
	if err != nil {
		return nil, err
	}
	// The flags sit above the --settings files, below managed settings.
	i := slices.IndexFunc(layers, func(l *layer) bool { return l.scope == ScopeManaged })
	if i < 0 {
		i = len(layers)
	}
	layers = slices.Insert(layers, i, flags)

	trusted := isTrusted([]string{ws, in.real}, layers)
	for i := range rep.Files {
		rep.Files[i].Trusted = trusted || (rep.Files[i].Scope != ScopeProject.String() && rep.Files[i].Scope != ScopeLocal.String())
	}
	p := &Policy{Workspace: ws, Home: o.Home, ClaudeDir: in.claudeDir, Mode: WorkspaceWrite, Trusted: trusted, TrustedDirs: trustedDirs(layers)}
	for _, c := range cands {
		p.SettingsFiles = append(p.SettingsFiles, c.path)
	}
	m := merger{p: p, rep: rep, serveDefault: o.Flags.Serve == "true"}
	admin := adminRequired(layers)
	for _, l := range layers {
		if !trusted && (l.scope == ScopeProject || l.scope == ScopeLocal) {
			m.untrusted(l)
		} else if admin != "" && (l.scope == ScopeProject || l.scope == ScopeLocal) {
			m.adminRequired(l, admin)
		}
		m.apply(l)
	}
	m.finish(layers)
	if err := m.credentials(); err != nil {
		return nil, err
	}
	p.Report = rep

	// What Claude Code runs on the host by itself, named by its settings
	// files and .mcp.json, whatever their trust: this only protects.
	var commands []string
	for i, c := range cands {
		if c.format == formatClaude && in.errs[i] == nil {
			commands = append(commands, hostCommands(in.data[i])...)
		}
	}
	fsys := o.fsys()
	commands = append(commands, readHostCommands(fsys, ws)...)
	p.HostRun = hostRunFiles(fsys, commands, ws, o.Home)
	// Claude Code's configuration elsewhere ($CLAUDE_CONFIG_DIR) holds its
	// login as ~/.claude does: hidden as the default policy hides that one.
	if home := filepath.Join(o.Home, ".claude"); p.ClaudeDir != "" && p.ClaudeDir != home {
		login := EscapePattern(filepath.Join(p.ClaudeDir, ".credentials.json"))
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, login)
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.filesystem.denyRead", Value: login, Source: "$CLAUDE_CONFIG_DIR (Claude Code's login, as ~/.claude/.credentials.json)"})
	}
	if len(p.HostRun) > 0 {
		rep.Notes = append(rep.Notes, "read-only where a writable root covers them, as Claude Code runs them on the host by itself (its hooks, status line, helpers, MCP servers): "+strings.Join(p.HostRun, ", "))
	}
	return p, nil
}

const defaultSettingsName = "(embedded default policy)"

// MaxSettingsSize is the largest settings file cordon reads: settings are
// a few kilobytes, and a cloned repository's must not make cordon hold
// gigabytes.
const MaxSettingsSize = 1 << 20

// readSettingsFile reads a settings file that must be a regular file (or a
// symlink to one): a named pipe in a cloned repository would block cordon
// until something wrote to it, /dev/zero would fill its memory.
func readSettingsFile(fsys fs.FS, name string) ([]byte, error) {
	return readSettings(fsys, name, false)
}

// readSettings is readSettingsFile; owned: the file must be the caller's
// or root's (ownerError), checked on the descriptor read.
func readSettings(fsys fs.FS, name string, owned bool) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if owned {
		if err := ownerError(fi); err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
	}
	switch {
	case fi.IsDir():
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	case !fi.Mode().IsRegular():
		kind := "a special file"
		switch t := fi.Mode().Type(); {
		case t&fs.ModeNamedPipe != 0:
			kind = "a named pipe"
		case t&fs.ModeDevice != 0:
			kind = "a device"
		case t&fs.ModeSocket != 0:
			kind = "a socket"
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("not a regular file but %s", kind)}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSettingsSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSettingsSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d KiB: not a settings file", MaxSettingsSize>>10)}
	}
	return data, nil
}

// ownerError refuses a user or managed settings file that another user
// owns (root's may be anyone's): with HOME in someone else's home (su
// without -, sudo keeping HOME), that user would write the caller's
// policy, e.g. allowWrite //etc for root's sandboxes.
func ownerError(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); int(st.Uid) != euid && st.Uid != 0 {
		return fmt.Errorf("owned by uid %d, neither the caller (uid %d) nor root: another user's settings would set this caller's sandbox", st.Uid, euid)
	}
	return nil
}

// hostFS is the host's file system rooted at "/", opening without blocking:
// opening a named pipe for reading waits for a writer, and a command in a
// sandbox can make one where a workspace settings file belongs.
type hostFS struct{}

func (hostFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return os.OpenFile("/"+name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Lstat and ReadLink look at a symlink without following it, and at a
// file without opening it (fs.ReadLinkFS).
func (hostFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	return os.Lstat("/" + name)
}

func (hostFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return os.Readlink("/" + name)
}

// formatFlagFile is the dialect of a --settings file: any of the three
// shapes (sandbox-runtime's top-level network and filesystem, Claude
// Code's and cordon's blocks), other tools' top-level keys ignored.
func formatFlagFile(string) format { return formatAny }

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readLayer parses and decodes one settings file.
func readLayer(file string, data []byte, scope Scope, f format, o LoadOptions, base string) (*layer, error) {
	if f == formatClaude && len(bytes.TrimSpace(data)) == 0 {
		// Claude Code reads an empty settings file as {}
		data = []byte("{}")
	}
	root, err := parseJSON(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, &SettingsError{File: file, Pos: se.pos, Msg: se.msg}
		}
		return nil, &SettingsError{File: file, Msg: err.Error()}
	}
	l := &layer{file: file, scope: scope, base: base}
	d := &decoder{l: l, format: f, home: o.Home, cwd: o.Cwd, ruleDir: o.Cwd}
	d.pathDir = func(raw string) (string, error) { return expandPath(raw, f, o, base) }
	if f == formatClaude || f == formatAny {
		// Claude Code reads its sandbox block's paths as paths: "/x" is
		// absolute, "x" is in the file's project.
		d.sandboxPathDir = func(raw string) (string, error) { return expandSandboxPath(raw, o, base) }
	}
	// sandbox-runtime's blocks keep its path rules in any file.
	d.srtPathDir = func(raw string) (string, error) { return expandPath(raw, formatSRT, o, base) }
	if err := d.decode(root); err != nil {
		return nil, err
	}
	return l, nil
}

// expandPath turns a path as written in a settings file into an absolute
// pattern. Claude Code's rules (and cordon's own files): `//x` is the
// absolute /x, `~/x` is in the home, `/x` is relative to the project that
// holds the settings file, `x` and `./x` are relative to the current
// directory. sandbox-runtime's files and the command line: absolute paths
// are absolute, `~` is the home, the rest is relative to the current
// directory. Metacharacters are kept: the result is a pattern.
func expandPath(raw string, f format, o LoadOptions, base string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.ContainsRune(raw, 0) {
		return "", fmt.Errorf("NUL in a path")
	}
	var abs string
	switch {
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		abs = EscapePattern(o.Home) + raw[1:]
	case strings.HasPrefix(raw, "~"):
		return "", fmt.Errorf("%q: only the caller's own home (~/...) can be named", raw)
	case strings.HasPrefix(raw, "//") && f != formatSRT:
		abs = raw[1:]
	case strings.HasPrefix(raw, "/") && f != formatSRT && base != "" && base != "/":
		abs = EscapePattern(base) + raw
	case strings.HasPrefix(raw, "/"):
		abs = raw
	default:
		abs = EscapePattern(o.Cwd) + "/" + raw
	}
	return cleanPattern(abs), nil
}

// expandSandboxPath turns a path of Claude Code's sandbox block into an
// absolute pattern, as Claude Code does: `//x` and `/x` are the absolute
// /x, `~/x` is in the home, `x` and `./x` are relative to root, the
// project of the file (the workspace, ~/.claude for the user's file, a
// --settings file's directory).
func expandSandboxPath(raw string, o LoadOptions, root string) (string, error) {
	switch {
	case raw == "":
		return "", fmt.Errorf("empty path")
	case strings.ContainsRune(raw, 0):
		return "", fmt.Errorf("NUL in a path")
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		return cleanPattern(EscapePattern(o.Home) + raw[1:]), nil
	case strings.HasPrefix(raw, "~"):
		return "", fmt.Errorf("%q: only the caller's own home (~/...) can be named", raw)
	case strings.HasPrefix(raw, "/"):
		return cleanPattern(raw), nil
	}
	if root == "" || root == "/" {
		root = o.Cwd
	}
	return cleanPattern(EscapePattern(root) + "/" + raw), nil
}

// cleanPattern cleans a pattern like a path ("a//b/./c/../d" → "a/b/d")
// without touching its metacharacters.
func cleanPattern(p string) string {
	c := filepath.Clean(p)
	if strings.HasSuffix(p, "/**") || strings.HasSuffix(p, "/**/") {
		c = strings.TrimSuffix(c, "/") // Clean keeps "**"
	}
	return c
}

// flagLayer is the command line as a settings layer.
func flagLayer(o LoadOptions) (*layer, error) {
	l := &layer{file: "command line", scope: ScopeFlag}
	add := func(dst *[]entry, flag string, vals []string, check func(string) (string, error)) error {
		for _, v := range vals {
			src := Source{File: "--" + flag, Scope: ScopeFlag}
			nv, err := check(v)
			if err != nil {
				return &SettingsError{File: "--" + flag, Msg: err.Error()}
			}
			*dst = append(*dst, entry{V: nv, Src: src})
		}
		return nil
	}
	path := func(v string) (string, error) {
		p, err := expandPath(v, formatSRT, o, "")
		if err != nil {
			return "", err
		}
		return p, ValidatePattern(p)
	}
	f := o.Flags
	for _, e := range []error{
		add(&l.allowWrite, "allow-write", f.AllowWrite, path),
		add(&l.allowRead, "allow-read", f.AllowRead, path),
		add(&l.denyRead, "deny-read", f.DenyRead, path),
		add(&l.denyWrite, "deny-write", f.DenyWrite, path),
		add(&l.allowedDomains, "allow-domain", f.AllowDomain, CheckDomainPattern),
		add(&l.deniedDomains, "deny-domain", f.DenyDomain, CheckDomainPattern),
	} {
		if e != nil {
			return nil, e
		}
	}
	if f.Mode != "" {
		if _, err := ParseMode(f.Mode); err != nil {
			return nil, &SettingsError{File: "--mode", Msg: err.Error()}
		}
		l.mode = &setting[string]{f.Mode, Source{File: "--mode", Scope: ScopeFlag}}
	}
	// The limits go through the settings decoder, as if written in a file.
	for _, x := range []struct{ key, flag, v string }{
		{"memory", "memory", f.Memory}, {"pids", "pids", f.Pids}, {"cpus", "cpus", f.CPUs},
		{"timeout", "timeout", f.Timeout}, {"outputLimit", "output-limit", f.OutputLimit},
		{"fileSize", "file-size", f.FileSize}, {"openFiles", "open-files", f.OpenFiles}, {"tmpSize", "tmp-size", f.TmpSize},
	} {
		if x.v == "" {
			continue
		}
		val := strconv.Quote(x.v)
		if x.key == "pids" || x.key == "cpus" || x.key == "openFiles" {
			// One number, not JSON spliced into the document below.
			if !validNumber(x.v) {
				return nil, &SettingsError{File: "--" + x.flag, Msg: fmt.Sprintf("%q is not a valid value", x.v)}
			}
			val = x.v
		}
		root, err := parseJSON([]byte(`{"cordon": {"limits": {` + strconv.Quote(x.key) + ": " + val + `}}}`))
		if err != nil {
			return nil, &SettingsError{File: "--" + x.flag, Msg: fmt.Sprintf("%q is not a valid value", x.v)}
		}
		fl := &layer{file: "--" + x.flag, scope: ScopeFlag}
		d := &decoder{l: fl, format: formatCordon}
		if err := d.decode(root); err != nil {
			var se *SettingsError
			if errors.As(err, &se) {
				return nil, &SettingsError{File: "--" + x.flag, Msg: se.Msg}
			}
			return nil, err
		}
		for _, p := range []struct {
			dst **setting[int64]
			src *setting[int64]
		}{{&l.memory, fl.memory}, {&l.pids, fl.pids}, {&l.outputLimit, fl.outputLimit}, {&l.fileSize, fl.fileSize}, {&l.openFiles, fl.openFiles}, {&l.tmpSize, fl.tmpSize}} {
			if p.src != nil {
				*p.dst = &setting[int64]{p.src.V, Source{File: "--" + x.flag, Scope: ScopeFlag}}
			}
		}
		if fl.memoryPercent != nil {
			l.memoryPercent = &setting[float64]{fl.memoryPercent.V, Source{File: "--memory", Scope: ScopeFlag}}
		}
		if fl.cpus != nil {
			l.cpus = &setting[float64]{fl.cpus.V, Source{File: "--cpus", Scope: ScopeFlag}}
		}
		if fl.timeout != nil {
			l.timeout = &setting[time.Duration]{fl.timeout.V, Source{File: "--timeout", Scope: ScopeFlag}}
		}
	}
	return l, nil
}

// TrustDepth is how far below a directory in cordon.trustedWorkspaces a
// workspace is trusted with it: as deep as a sandbox's mount plan
// protects the settings files below its writable roots and the trusted
// directories in them (ProtectedBelow). Deeper, a sandboxed command of the
// trusted workspace could have written the settings (a hook runs on the
// host).
const TrustDepth = 2

// trustedDirs lists cordon.trustedWorkspaces of the user and managed
// settings.
func trustedDirs(layers []*layer) []string {
	var out []string
	for _, l := range layers {
		if l.scope != ScopeUser && l.scope != ScopeManaged {
			continue
		}
		for _, t := range l.trusted {
			if !slices.Contains(out, t.V) {
				out = append(out, t.V)
			}
		}
	}
	return out
}

// isTrusted reports whether the user (or the administrator) trusts the
// workspace: it, or a directory at most TrustDepth above it, is in
// cordon.trustedWorkspaces of the user or managed settings.
func isTrusted(names []string, layers []*layer) bool {
	for _, l := range layers {
		if l.scope != ScopeUser && l.scope != ScopeManaged {
			continue
		}
		for _, t := range l.trusted {
			for _, w := range names {
				if w == t.V {
					return true
				}
				rest, ok := strings.CutPrefix(w, strings.TrimSuffix(t.V, "/")+"/")
				if ok && strings.Count(rest, "/") < TrustDepth {
					return true
				}
			}
		}
	}
	return false
}
