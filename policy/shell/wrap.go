package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The wrappers Parse sees through are listed in the package
// documentation. A wrapper's command is recorded with the wrapper in its
// Wrappers chain; the wrapper itself is recorded only when it runs no
// command (sudo -i, env alone) or does work of its own (find, trap, su).

// call is a simple command being unwrapped.
type call struct {
	words   []Word
	assigns []Assign
	redirs  []Redirect
	in      *input
	f       frame
	dynamic string
	extra   bool
}

// unwrapped is what a wrapper handler did with a call.
type unwrapped int

const (
	plain unwrapped = iota // not a wrapper use: record the call as it is
	inner                  // c.words now holds the wrapped command
	done                   // the handler recorded everything
)

type handler func(p *parser, c *call) unwrapped

// handlers see through the wrappers, by name. Filled by init: the
// handlers themselves parse commands, through it.
var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"sudo":             argvWrapper("sudo", sudoOpts),
		"doas":             argvWrapper("doas", optSpec{flags: "Lns", args: "Cu"}),
		"pkexec":           argvWrapper("pkexec", optSpec{long: " disable-internal-agent keep-cwd help version ", longArgs: " user "}),
		"env":              envWrapper,
		"nohup":            argvWrapper("nohup", optSpec{}),
		"nice":             argvWrapper("nice", optSpec{args: "n", longArgs: " adjustment ", numeric: true}),
		"ionice":           argvWrapper("ionice", optSpec{flags: "t", args: "cnpPu", long: " ignore ", longArgs: " class classdata pid pgid uid ", noCommand: "pPu"}),
		"timeout":          argvWrapper("timeout", optSpec{flags: "v", args: "sk", long: " preserve-status foreground verbose ", longArgs: " signal kill-after ", positional: 1}),
		"time":             argvWrapper("time", optSpec{flags: "apqvV", args: "fo", long: " append portability quiet verbose ", longArgs: " format output "}),
		"command":          argvWrapper("command", optSpec{flags: "pvV", noCommand: "vV"}),
		"builtin":          argvWrapper("builtin", optSpec{}),
		"exec":             argvWrapper("exec", optSpec{flags: "cl", args: "a"}),
		"stdbuf":           argvWrapper("stdbuf", optSpec{args: "ioe", longArgs: " input output error "}),
		"setsid":           argvWrapper("setsid", optSpec{flags: "cfw", long: " ctty fork wait "}),
		"chroot":           argvWrapper("chroot", optSpec{long: " skip-chdir ", longArgs: " userspec groups ", positional: 1, chdir: true}),
		"unbuffer":         argvWrapper("unbuffer", optSpec{flags: "p"}),
		"taskset":          argvWrapper("taskset", optSpec{flags: "ac", long: " all-tasks cpu-list ", noCommand: "p", positional: 1}),
		"chrt":             argvWrapper("chrt", optSpec{flags: "abdfiormRv", args: "TPD", noCommand: "pm", positional: 1}),
		"strace":           argvWrapper("strace", optSpec{flags: "cCdDfFhiqrtTvVwxyzZkn", args: "abeEIoOpPsSuUX", noCommand: "p"}),
		"fakeroot":         argvWrapper("fakeroot", optSpec{flags: "uhv", args: "lsib", longArgs: " faked lib "}),
		"firejail":         argvWrapper("firejail", optSpec{}),
		"proxychains":      argvWrapper("proxychains", optSpec{flags: "q", args: "f"}),
		"proxychains4":     argvWrapper("proxychains4", optSpec{flags: "q", args: "f"}),
		"torsocks":         argvWrapper("torsocks", optSpec{flags: "idq", args: "upaP", long: " shell isolate quiet debug ", longArgs: " user pass address port "}),
		"xvfb-run":         argvWrapper("xvfb-run", optSpec{flags: "ahl", args: "nsefwp", long: " auto-servernum help ", longArgs: " server-num server-args error-file auth-file wait xauth-protocol "}),
		"dbus-run-session": argvWrapper("dbus-run-session", optSpec{long: " help version ", longArgs: " config-file dbus-daemon "}),
		"ssh-agent":        argvWrapper("ssh-agent", optSpec{flags: "cDdks", args: "aEPt"}),
		"valgrind":         argvWrapper("valgrind", optSpec{flags: "qv", long: " quiet verbose trace-children track-origins leak-check "}),
		"catchsegv":        argvWrapper("catchsegv", optSpec{}),
		"faketime":         argvWrapper("faketime", optSpec{flags: "m", args: "fp", positional: 1}),
		"nsenter":          argvWrapper("nsenter", optSpec{flags: "amuinpUCTFZ", args: "tSG", optional: "rw", long: " all mount uts ipc net pid user cgroup time preserve-credentials no-fork follow-context ", longArgs: " target setuid setgid root wd ", chdir: true}),
		"unshare":          argvWrapper("unshare", optSpec{flags: "muinpUCTfrcR", long: " mount uts ipc net pid user cgroup time fork map-root-user map-current-user mount-proc kill-child keep-caps ", longArgs: " propagation setgroups root wd map-user map-group map-users map-groups ", chdir: true}),
		"setpriv":          argvWrapper("setpriv", optSpec{flags: "d", long: " dump no-new-privs clear-groups keep-groups init-groups reset-env ", longArgs: " reuid regid ruid rgid euid egid groups inh-caps ambient-caps bounding-set securebits pdeathsig selinux-label apparmor-profile landlock-access landlock-rule "}),
		"ltrace":           argvWrapper("ltrace", optSpec{flags: "bcCfhiLrStTV", args: "aAeFlnopsuwxD", noCommand: "p"}),
		"caffeinate":       argvWrapper("caffeinate", optSpec{flags: "dimsu", args: "tw"}),
		"arch":             archWrapper,
		"numactl":          argvWrapper("numactl", optSpec{flags: "alsH", args: "CimNpPw", long: " localalloc all show hardware balancing ", longArgs: " interleave membind cpunodebind physcpubind preferred preferred-many weighted-interleave cpubind "}),
		"cpulimit":         argvWrapper("cpulimit", optSpec{flags: "fqkrizv", args: "lpe", long: " foreground quiet kill restore lazy include-children verbose ", longArgs: " limit pid exe cpu ", noCommand: "pe"}),
		"nocache":          argvWrapper("nocache", optSpec{}),
		"eatmydata":        argvWrapper("eatmydata", optSpec{}),
		"chronic":          argvWrapper("chronic", optSpec{flags: "ev"}),
		"sshpass":          argvWrapper("sshpass", optSpec{flags: "ev", args: "pfdP"}),
		"tini":             argvWrapper("tini", optSpec{flags: "svwgl", args: "pe"}),
		"dumb-init":        argvWrapper("dumb-init", optSpec{flags: "cv", args: "r", long: " single-child verbose ", longArgs: " rewrite "}),
		"prlimit":          argvWrapper("prlimit", optSpec{args: "o", optional: "AcdefilmnqrstuvxyV", long: " as core cpu data fsize locks memlock msgqueue nice nofile nproc rss rtprio rttime sigpending stack noheadings raw verbose ", longArgs: " output ", noCommand: "p"}),
		"gosu":             argvWrapper("gosu", optSpec{positional: 1}),
		"su-exec":          argvWrapper("su-exec", optSpec{positional: 1}),
		"systemd-run":      argvWrapper("systemd-run", optSpec{flags: "qrtPGSdh", args: "upEHM", long: " user system scope no-block wait quiet pipe pty shell collect no-ask-password same-dir send-sighup remain-after-exit ", longArgs: " unit property description slice uid gid nice working-directory setenv on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar on-clock-change on-timezone-change path-property socket-property timer-property service-type machine host ", chdir: true}),
		"parallel":         parallelWrapper,
		"fd":               fdWrapper,
		"compgen":          compgenWrapper,
		"mapfile":          mapfileWrapper,
		"ed":               edRuns,
		"tar":              tarRuns,
		"bsdtar":           tarRuns,
		"gtar":             tarRuns,
		"rsync":            rsyncRuns,
		"ssh":              sshRuns,
		"scp":              sshRuns,
		"sftp":             sshRuns,
		"zip":              zipRuns,
		"git":              gitRuns,
		"gdb":              gdbRuns,
		"perf":             perfRuns,
		"go":               goRuns,
		"readarray":        mapfileWrapper,
		"fdfind":           fdWrapper,
		"runuser":          suWrapper("runuser"),
		"su":               suWrapper("su"),
		"flock":            flockWrapper,
		"script":           scriptWrapper,
		"sg":               sgWrapper,
		"busybox":          busyboxWrapper,
		"toybox":           busyboxWrapper,
		"coreutils":        coreutilsWrapper,
		"xargs":            xargsWrapper,
		"find":             findWrapper,
		"eval":             evalWrapper,
		"trap":             trapWrapper,
		"alias":            aliasWrapper,
		"watch":            watchWrapper,
		"npx":              npmExecWrapper,
		"npm":              npmExecWrapper,
		"uv":               subWrapper("run", optSpec{flags: "q", long: " no-sync locked frozen isolated no-project active no-dev all-extras all-packages no-editable offline quiet verbose ", longArgs: " with with-editable with-requirements python directory project env-file extra group package index index-url extra-index-url find-links config-file cache-dir no-group only-group ", chdir: true}),
		"poetry":           subWrapper("run", optSpec{}),
		"pipenv":           subWrapper("run", optSpec{}),
		"pdm":              subWrapper("run", optSpec{}),
		"rye":              subWrapper("run", optSpec{}),
		"hatch":            subWrapper("run", optSpec{}),
		"bundle":           subWrapper("exec", optSpec{}),
		"conda":            subWrapper("run", condaOpts),
		"mamba":            subWrapper("run", condaOpts),
		"micromamba":       subWrapper("run", condaOpts),
		"pnpm":             subWrapper("exec", optSpec{}),
		"yarn":             subWrapper("exec", optSpec{}),
		"direnv":           subWrapper("exec", optSpec{positional: 1, chdir: true}),
		"mise":             miseWrapper,
		"source":           sourceWrapper,
		".":                sourceWrapper,
	}
	for _, sh := range shells {
		handlers[sh] = shellWrapper
	}
}

// archWrapper handles macOS's arch -x86_64 [-e NAME=VALUE] [-d NAME] command
// (on Linux, arch takes no command).
func archWrapper(p *parser, c *call) unwrapped {
	i := 1
	for i < len(c.words) && !c.words[i].Dynamic && strings.HasPrefix(c.words[i].Value, "-") {
		switch c.words[i].Value {
		case "-e":
			if i+1 < len(c.words) && isAssignment(c.words[i+1].Value) {
				name, val, _ := strings.Cut(c.words[i+1].Value, "=")
				c.assigns = append(c.assigns, Assign{Name: name, Value: Word{Value: val}})
			}
			i++
		case "-d":
			i++
		}
		i++
	}
	if i >= len(c.words) {
		return plain
	}
	c.wrap("arch", i)
	return inner
}

var parallelOpts = optSpec{
	flags:    "0kmquvX",
	args:     "adEIjlLnNPsS",
	long:     " null keep-order quote ungroup group line-buffer verbose dry-run bar progress eta will-cite tag xargs pipe plus fg bg shuf trim-none no-notice halt-on-error ",
	longArgs: " jobs max-procs arg-file delimiter max-args max-replace-args max-lines replace colsep timeout retries delay joblog results halt tmpdir workdir wd sshlogin env load memfree nice block tagstring basefile return transfer-file header termseq ",
}

// parallelWrapper handles GNU parallel: its command words, up to :::, are
// a shell command it runs with more arguments; without them, each argument
// is a command, or, with none either, each line of its input.
func parallelWrapper(p *parser, c *call) unwrapped {
	s := parallelOpts.scan(c.words, 1)
	c.apply("parallel", parallelOpts, s)
	w := Wrapper{Name: "parallel", Args: slices.Clone(c.words[:s.end])}
	cmd, args := c.words[s.end:], []Word(nil)
	if k := slices.IndexFunc(cmd, func(w Word) bool { return !w.Dynamic && strings.HasPrefix(w.Value, ":::") }); k >= 0 {
		cmd, args = cmd[:k], cmd[k:]
	}
	if len(cmd) > 0 {
		c.f.extra = true
		return p.nested(c, w, joinWords(cmd), nil, false)
	}
	var scripts []Word
	for _, a := range args {
		if a.Dynamic || !strings.HasPrefix(a.Value, ":::") {
			scripts = append(scripts, a)
		} else if strings.HasPrefix(a.Value, "::::") {
			scripts = nil // commands read from files
			break
		}
	}
	if len(scripts) == 0 {
		if c.dynamic == "" {
			c.dynamic = "parallel runs the commands it reads from its input or a file"
		}
		return plain
	}
	for _, sc := range scripts {
		p.nested(c, w, sc, nil, false)
	}
	return done
}

// runsOperand reports a program that runs its arguments as a command or
// script: a wrapper, a shell, an interpreter.
func runsOperand(base string) bool {
	switch base {
	case "find", "npx", "npm", "uv", "poetry", "pipenv", "pdm", "rye", "hatch", "bundle", "conda", "mamba",
		"micromamba", "pnpm", "yarn", "direnv", "mise", "source", ".":
		return base == "source" || base == "."
	}
	return handlers[base] != nil || interpreters[base]
}

// shells are the programs whose -c argument is a shell script.
var shells = []string{"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "rbash"}

var sudoOpts = optSpec{
	flags:     "AbEeHiKklnPSsVv",
	args:      "CDghpRrTtUu",
	long:      " askpass background bell edit help login list non-interactive preserve-groups remove-timestamp reset-timestamp set-home shell stdin validate version preserve-env ",
	longArgs:  " chdir chroot close-from command-timeout group host other-user prompt role type user ",
	assigns:   true,
	noCommand: "eKklVv",
	chdir:     true,
}

var condaOpts = optSpec{flags: "v", args: "np", long: " no-capture-output live-stream ", longArgs: " name prefix cwd "}

// call unwraps wrappers until it reaches the command that runs, and
// records it.
func (p *parser) call(c *call) {
	for range 64 {
		if len(c.words) == 0 {
			p.record(c)
			return
		}
		name := c.words[0]
		if name.Dynamic {
			p.record(c)
			return
		}
		h := handlers[path.Base(name.Value)]
		if h == nil {
			p.record(c)
			return
		}
		switch h(p, c) {
		case plain:
			p.record(c)
			return
		case done:
			return
		}
	}
	if c.dynamic == "" {
		c.dynamic = "too many nested wrappers"
	}
	p.record(c)
}

// wrap moves c into the command at words[n:], after the wrapper's own
// words words[:n].
func (c *call) wrap(label string, n int) {
	w := Wrapper{Name: label, Args: slices.Clone(c.words[:n])}
	c.f.wrappers = append(slices.Clip(c.f.wrappers), w)
	c.words = c.words[n:]
}

// optSpec describes a command's options, the getopt way.
type optSpec struct {
	flags      string // short options without an argument
	args       string // short options with an argument
	optional   string // short options with an optional, attached argument
	long       string // long options without an argument, space separated and padded
	longArgs   string // long options with an argument
	numeric    bool   // -N options (nice -10)
	assigns    bool   // NAME=value operands before the command (env, sudo)
	noCommand  string // short options after which no command runs
	positional int    // operands before the command (timeout's duration)
	chdir      bool   // the wrapper may change directory (sudo -D, env -C)
}

// scanned is the result of reading options.
type scanned struct {
	end     int // index of the first operand
	opts    map[string]Word
	assigns []Assign
	unknown string
}

func (sp optSpec) scan(words []Word, i int) scanned {
	s := scanned{opts: map[string]Word{}}
	for ; i < len(words); i++ {
		w := words[i]
		v := w.Value
		if w.Dynamic {
			if strings.HasPrefix(v, "-") {
				s.unknown = v
				continue
			}
			break
		}
		if v == "--" {
			i++
			break
		}
		if sp.assigns && isAssignment(v) {
			name, val, _ := strings.Cut(v, "=")
			s.assigns = append(s.assigns, Assign{Name: name, Value: Word{Value: val, Home: strings.HasPrefix(val, "~/") || val == "~"}})
			continue
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v[2:], "=")
			name = sp.longName(name)
			switch {
			case strings.Contains(sp.longArgs, " "+name+" "):
				if !eq && i+1 < len(words) {
					i++
					s.opts["--"+name] = words[i]
				} else {
					s.opts["--"+name] = Word{Value: val}
				}
			default:
				if !strings.Contains(sp.long, " "+name+" ") && s.unknown == "" {
					s.unknown = v
				}
				s.opts["--"+name] = Word{Value: val}
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			switch {
			case strings.IndexByte(sp.args, ch) >= 0:
				if j+1 < len(v) {
					s.opts[string(ch)] = Word{Value: v[j+1:]}
				} else if i+1 < len(words) {
					i++
					s.opts[string(ch)] = words[i]
				}
				j = len(v)
			case strings.IndexByte(sp.optional, ch) >= 0:
				s.opts[string(ch)] = Word{Value: v[j+1:]}
				j = len(v)
			case strings.IndexByte(sp.flags, ch) >= 0:
				s.opts[string(ch)] = Word{}
			case sp.numeric && ch >= '0' && ch <= '9':
				j = len(v)
			default:
				if s.unknown == "" {
					s.unknown = v
				}
				s.opts[string(ch)] = Word{}
			}
		}
	}
	s.end = i
	return s
}

// longName is the long option name stands for: getopt_long takes a
// unique prefix of a long option for it (sort --out=f is --output=f).
func (sp optSpec) longName(name string) string {
	if name == "" || strings.Contains(sp.long, " "+name+" ") || strings.Contains(sp.longArgs, " "+name+" ") {
		return name
	}
	found := ""
	for _, l := range [2]string{sp.long, sp.longArgs} {
		for _, o := range strings.Fields(l) {
			if strings.HasPrefix(o, name) && o != found {
				if found != "" {
					return name // ambiguous: getopt_long refuses it
				}
				found = o
			}
		}
	}
	return cmpOr(found, name)
}

func isAssignment(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// apply records what the options imply for the wrapped command.
func (c *call) apply(name string, sp optSpec, s scanned) {
	if s.unknown != "" && c.dynamic == "" {
		c.dynamic = "unknown option " + s.unknown + " to " + name
	}
	c.assigns = append(c.assigns, s.assigns...)
	if sp.chdir {
		for _, k := range []string{"D", "C", "--chdir", "--directory", "--project", "R", "--chroot"} {
			if _, ok := s.opts[k]; ok {
				c.f.dirsUnknown = true
			}
		}
		if name == "chroot" || name == "direnv" {
			c.f.dirsUnknown = true
		}
	}
}

// argvWrapper handles a wrapper whose command is its first operand.
func argvWrapper(name string, sp optSpec) handler {
	return func(p *parser, c *call) unwrapped {
		s := sp.scan(c.words, 1)
		for _, ch := range sp.noCommand {
			if _, ok := s.opts[string(ch)]; ok {
				return plain
			}
		}
		n := s.end + sp.positional
		if n >= len(c.words) {
			return plain
		}
		c.apply(name, sp, s)
		c.wrap(name, n)
		return inner
	}
}

// subWrapper handles "tool SUB [options] command": uv run, bundle exec, ...
func subWrapper(sub string, sp optSpec) handler {
	return func(p *parser, c *call) unwrapped {
		if len(c.words) < 3 || c.words[1].Dynamic || c.words[1].Value != sub {
			return plain
		}
		name := path.Base(c.words[0].Value) + " " + sub
		s := sp.scan(c.words, 2)
		n := s.end + sp.positional
		if n >= len(c.words) {
			return plain
		}
		c.apply(path.Base(c.words[0].Value), sp, s)
		c.wrap(name, n)
		return inner
	}
}

func envWrapper(p *parser, c *call) unwrapped {
	sp := optSpec{
		flags:    "0iv",
		args:     "uCS",
		long:     " ignore-environment null debug list-signal-handling block-signal default-signal ignore-signal ",
		longArgs: " unset chdir split-string ",
		assigns:  true,
		chdir:    true,
	}
	s := sp.scan(c.words, 1)
	// "-" alone is -i; assignments may follow it
	for s.end < len(c.words) && !c.words[s.end].Dynamic && c.words[s.end].Value == "-" {
		more := sp.scan(c.words, s.end+1)
		more.assigns = append(s.assigns, more.assigns...)
		for k, v := range s.opts {
			more.opts[k] = v
		}
		if more.unknown == "" {
			more.unknown = s.unknown
		}
		s = more
	}
	split, hasSplit := s.opts["S"]
	if !hasSplit {
		split, hasSplit = s.opts["--split-string"]
	}
	c.apply("env", sp, s)
	if hasSplit {
		// env -S splits a string into words with its own rules
		var ws []Word
		for _, f := range strings.Fields(split.guessed()) {
			ws = append(ws, Word{Value: f})
		}
		c.wrap("env", s.end)
		c.words = append(ws, c.words...)
		if c.dynamic == "" {
			c.dynamic = "env -S splits a string into a command"
		}
		return inner
	}
	if s.end >= len(c.words) {
		return plain
	}
	c.wrap("env", s.end)
	return inner
}

// suWrapper handles su and runuser: a -c script, or with runuser -u an
// argument vector; without either they start an interactive shell.
func suWrapper(name string) handler {
	sp := optSpec{
		flags:    "flmpP",
		args:     "cgGswu",
		long:     " login preserve-environment pty fast ",
		longArgs: " command session-command group supp-group shell whitelist-environment user ",
	}
	return func(p *parser, c *call) unwrapped {
		// su permutes its arguments: options may follow the user
		opts := map[string]Word{}
		for i := 1; i < len(c.words); {
			s := sp.scan(c.words, i)
			for k, v := range s.opts {
				opts[k] = v
			}
			_, u := opts["u"]
			_, user := opts["--user"]
			if name == "runuser" && (u || user) {
				c.apply(name, sp, s)
				if s.end >= len(c.words) {
					return plain
				}
				c.wrap(name, s.end)
				return inner
			}
			i = s.end + 1 // the user, or "-"
		}
		for _, k := range []string{"c", "--command", "--session-command"} {
			if w, ok := opts[k]; ok {
				return p.nested(c, Wrapper{Name: name + " -c", Args: slices.Clone(c.words[:1])}, w, nil, true)
			}
		}
		return plain
	}
}

// shellWrapper handles bash -c 'script' and a shell reading a
// here-document; bash FILE runs a file and is not a wrapper.
func shellWrapper(p *parser, c *call) unwrapped {
	w := c.words
	base := path.Base(w[0].Value)
	hasC, stdin := false, false
	i := 1
scan:
	for ; i < len(w); i++ {
		a := w[i]
		v := a.Value
		if a.Dynamic {
			break scan // an operand: the script, or a script file
		}
		switch {
		case v == "--" || v == "-":
			i++
			stdin = stdin || v == "-"
			break scan
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, ch := range v[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break scan
		}
	}
	if i > len(w) {
		i = len(w)
	}
	own, ops := w[:i], w[i:]
	if hasC {
		if len(ops) == 0 {
			return plain
		}
		params := make([]string, 0, len(ops)-1)
		for _, o := range ops[1:] {
			params = append(params, o.guessed())
		}
		return p.nested(c, Wrapper{Name: base + " -c", Args: slices.Clone(own)}, ops[0], params, false)
	}
	for i, a := range own {
		if (a.Value == "--rcfile" || a.Value == "--init-file") && i+1 < len(w) && procSubst(w[i+1]) && c.dynamic == "" {
			c.dynamic = base + " runs a startup file produced at run time: " + w[i+1].Value
		}
	}
	if len(ops) > 0 && !stdin {
		if procSubst(ops[0]) && c.dynamic == "" {
			// bash <(echo curl x): the script is what a command prints
			c.dynamic = base + " runs a script produced at run time: " + ops[0].Value
		}
		if !isStdinPath(ops[0]) {
			return plain // runs a script file
		}
		ops = ops[1:]
	}
	if c.in != nil && c.in.doc != nil {
		// the here-document is the script, not a redirection to judge
		c.redirs = slices.DeleteFunc(slices.Clone(c.redirs), func(r Redirect) bool {
			return (r.Fd == "" || r.Fd == "0") && (r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<")
		})
		params := []string{base}
		for _, o := range ops {
			params = append(params, o.guessed())
		}
		return p.nested(c, Wrapper{Name: base + " <<", Args: slices.Clone(own)}, *c.in.doc, params, false)
	}
	if c.f.piped && c.in == nil && c.dynamic == "" {
		// echo curl x | sh: the script is what the pipe carries
		c.dynamic = base + " runs the script it reads from a pipe"
	}
	return plain
}

// isStdinPath reports a script path that is the standard input.
func isStdinPath(w Word) bool {
	return !w.Dynamic && (w.Value == "/dev/stdin" || w.Value == "/dev/fd/0" || w.Value == "/proc/self/fd/0")
}

// procSubst reports a word that is a process substitution, <(cmd): a file
// whose content a command produces at run time.
func procSubst(w Word) bool {
	return w.Dynamic && strings.HasPrefix(w.Value, "<(")
}

// sourceWrapper handles source /dev/stdin <<'EOF' ... EOF, and source
// <(cmd), which runs what cmd prints.
func sourceWrapper(p *parser, c *call) unwrapped {
	if len(c.words) >= 2 && procSubst(c.words[1]) && c.dynamic == "" {
		c.dynamic = "source runs a script produced at run time: " + c.words[1].Value
	}
	if len(c.words) < 2 || !isStdinPath(c.words[1]) || c.in == nil || c.in.doc == nil {
		return plain
	}
	c.redirs = slices.DeleteFunc(slices.Clone(c.redirs), func(r Redirect) bool {
		return (r.Fd == "" || r.Fd == "0") && (r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<")
	})
	return p.nested(c, Wrapper{Name: path.Base(c.words[0].Value) + " <<", Args: slices.Clone(c.words[:2])}, *c.in.doc, nil, false)
}

// nested walks a script string as the commands of the wrapper. keep
// records the wrapper command itself too.
func (p *parser) nested(c *call, w Wrapper, script Word, params []string, keep bool) unwrapped {
	f := c.nestedFrame(w, params)
	if p.depth >= maxDepth {
		if c.dynamic == "" {
			c.dynamic = "script strings nested too deeply"
		}
		return plain
	}
	if script.Dynamic {
		if c.dynamic == "" {
			c.dynamic = w.Name + " runs text known only at run time: " + script.Value
		}
		p.record(c)
		// what the text would be with unset variables, for deny rules only
		f.dynamic = c.dynamic
		p.walkString(script.Guess, f)
		return done
	}
	if keep || len(c.redirs) > 0 {
		rc := *c
		if !keep {
			rc.words = nil
		}
		p.record(&rc)
	}
	if err := p.walkString(script.Value, f); err != nil {
		if c.dynamic == "" {
			c.dynamic = w.Name + " script does not parse: " + err.Error()
		}
		rc := *c
		rc.redirs = nil
		p.record(&rc)
	}
	return done
}

// nestedFrame is the frame of a script string c's wrapper w runs: c's
// frame under w, with c's assignments in its environment, params as its
// positional parameters, and c's dynamic reason.
func (c *call) nestedFrame(w Wrapper, params []string) frame {
	f := c.f
	f.wrappers = append(slices.Clip(f.wrappers), w)
	f.env = append(slices.Clip(f.env), c.assigns...)
	f.params = params
	if f.dynamic == "" {
		f.dynamic = c.dynamic
	}
	return f
}

// walkString parses and walks a nested script string.
func (p *parser) walkString(src string, f frame) error {
	p.depth++
	oldParams := p.params
	p.params = f.params
	err := p.script(src, f)
	p.params = oldParams
	p.depth--
	return err
}

func evalWrapper(p *parser, c *call) unwrapped {
	if len(c.words) < 2 {
		return plain
	}
	// plain words parse back into themselves: eval eval curl x is curl x
	simple := !syntax.IsKeyword(c.words[1].Value)
	for _, w := range c.words[1:] {
		simple = simple && !w.Dynamic && w.Value != "" && strings.Trim(w.Value, plainChars) == ""
	}
	if simple {
		c.wrap("eval", 1)
		return inner
	}
	script := joinWords(c.words[1:])
	return p.nested(c, Wrapper{Name: "eval", Args: slices.Clone(c.words[:1])}, script, nil, false)
}

// plainChars are the characters of a word that reads the same in any shell
// context.
const plainChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,@+-"

// joinWords joins words with spaces, as eval and watch do.
func joinWords(ws []Word) Word {
	var out Word
	vals := make([]string, len(ws))
	guesses := make([]string, len(ws))
	for i, w := range ws {
		vals[i] = w.Value
		guesses[i] = w.guessed()
		out.Dynamic = out.Dynamic || w.Dynamic
	}
	out.Value = strings.Join(vals, " ")
	if out.Dynamic {
		out.Guess = strings.Join(guesses, " ")
	}
	return out
}

// trapWrapper records trap and walks its action as a script that runs
// later, from wherever the shell is then.
func trapWrapper(p *parser, c *call) unwrapped {
	i := 1
	for i < len(c.words) && !c.words[i].Dynamic && strings.HasPrefix(c.words[i].Value, "-") && c.words[i].Value != "-" {
		if c.words[i].Value == "--" {
			i++
			break
		}
		if c.words[i].Value == "-l" || c.words[i].Value == "-p" || c.words[i].Value == "-P" {
			return plain
		}
		i++
	}
	ops := c.words[i:]
	if len(ops) < 2 || !ops[0].Dynamic && (ops[0].Value == "" || ops[0].Value == "-") {
		return plain
	}
	p.record(c)
	inner := *c
	inner.redirs = nil
	inner.f.late = true
	return p.nested(&inner, Wrapper{Name: "trap", Args: slices.Clone(c.words[:i])}, ops[0], nil, false)
}

// aliasWrapper records alias and walks each definition as a script that
// may run later, in place of a command name.
func aliasWrapper(p *parser, c *call) unwrapped {
	p.record(c)
	for _, w := range c.words[1:] {
		_, def, ok := strings.Cut(w.Value, "=")
		if !ok {
			continue
		}
		body := w
		body.Value = def
		if w.Dynamic {
			_, body.Guess, _ = strings.Cut(w.Guess, "=")
		}
		inner := *c
		inner.redirs = nil
		inner.f.late = true
		if inner.dynamic == "" {
			// an alias changes what later command names run
			inner.dynamic = "defined by an alias"
		}
		p.nested(&inner, Wrapper{Name: "alias", Args: slices.Clone(c.words[:1])}, body, nil, false)
	}
	return done
}

func watchWrapper(p *parser, c *call) unwrapped {
	sp := optSpec{
		flags:    "bcCeftgprwx",
		args:     "nq",
		optional: "d",
		long:     " beep color no-color errexit chgexit no-title precise no-rerun no-wrap exec follow differences ",
		longArgs: " interval equexit ",
	}
	s := sp.scan(c.words, 1)
	if s.end >= len(c.words) {
		return plain
	}
	c.apply("watch", sp, s)
	_, x := s.opts["x"]
	_, exec := s.opts["--exec"]
	if x || exec {
		c.wrap("watch", s.end)
		return inner
	}
	// watch runs its arguments joined by spaces with sh -c
	script := joinWords(c.words[s.end:])
	c.words = c.words[:s.end]
	return p.nested(c, Wrapper{Name: "watch", Args: slices.Clone(c.words)}, script, nil, false)
}

func flockWrapper(p *parser, c *call) unwrapped {
	sp := optSpec{
		flags:    "sxeunoFv",
		args:     "wEc",
		long:     " shared exclusive unlock nonblock no-fork verbose close ",
		longArgs: " timeout wait conflict-exit-code command ",
	}
	s := sp.scan(c.words, 1)
	if s.end >= len(c.words) {
		return plain
	}
	// flock FILE -c SCRIPT, flock FILE CMD..., or flock FD
	rest := sp.scan(c.words, s.end+1)
	for k, v := range rest.opts {
		s.opts[k] = v
	}
	c.apply("flock", sp, s)
	for _, k := range []string{"c", "--command"} {
		if w, ok := s.opts[k]; ok {
			return p.nested(c, Wrapper{Name: "flock -c", Args: slices.Clone(c.words[:s.end+1])}, w, nil, false)
		}
	}
	if rest.end >= len(c.words) {
		return plain
	}
	c.wrap("flock", rest.end)
	return inner
}

func scriptWrapper(p *parser, c *call) unwrapped {
	sp := optSpec{flags: "aefqk", args: "cEIOBTmo", optional: "t", long: " append return flush force quiet ", longArgs: " command echo log-in log-out log-io log-timing logging-format output-limit "}
	s := sp.scan(c.words, 1)
	for _, k := range []string{"c", "--command"} {
		if w, ok := s.opts[k]; ok {
			c.apply("script", sp, s)
			return p.nested(c, Wrapper{Name: "script -c", Args: slices.Clone(c.words)}, w, nil, true)
		}
	}
	return plain
}

// sgWrapper handles sg [-] GROUP [-c] COMMAND, where COMMAND is a script.
func sgWrapper(p *parser, c *call) unwrapped {
	i := 1
	if i < len(c.words) && c.words[i].Value == "-" {
		i++
	}
	i++ // the group
	if i < len(c.words) && c.words[i].Value == "-c" {
		i++
	}
	if i >= len(c.words) {
		return plain
	}
	script := joinWords(c.words[i:])
	c.words = c.words[:i]
	return p.nested(c, Wrapper{Name: "sg", Args: slices.Clone(c.words)}, script, nil, false)
}

func busyboxWrapper(p *parser, c *call) unwrapped {
	if len(c.words) < 2 || c.words[1].Dynamic || strings.HasPrefix(c.words[1].Value, "-") {
		return plain
	}
	c.wrap(path.Base(c.words[0].Value), 1)
	return inner
}

// coreutilsWrapper handles the multi-call coreutils: coreutils rm x
// (uutils), coreutils --coreutils-prog=rm x (GNU).
func coreutilsWrapper(p *parser, c *call) unwrapped {
	if len(c.words) < 2 || c.words[1].Dynamic {
		return plain
	}
	if prog, ok := strings.CutPrefix(c.words[1].Value, "--coreutils-prog="); ok {
		c.wrap("coreutils", 2)
		c.words = append([]Word{{Value: prog}}, c.words...)
		return inner
	}
	return busyboxWrapper(p, c)
}

// miseWrapper handles mise exec|x [TOOL@VERSION...] -- COMMAND.
func miseWrapper(p *parser, c *call) unwrapped {
	if len(c.words) < 3 || c.words[1].Value != "exec" && c.words[1].Value != "x" {
		return plain
	}
	for i := 2; i < len(c.words); i++ {
		if !c.words[i].Dynamic && c.words[i].Value == "--" {
			if i+1 >= len(c.words) {
				return plain
			}
			c.wrap("mise exec", i+1)
			return inner
		}
	}
	if c.dynamic == "" {
		c.dynamic = "mise exec without --"
	}
	return plain
}

// npmExecWrapper handles the script string of npx -c and npm exec -c; npx
// PACKAGE runs a package and is not a wrapper.
func npmExecWrapper(p *parser, c *call) unwrapped {
	i := 1
	if path.Base(c.words[0].Value) == "npm" {
		if len(c.words) < 2 || c.words[1].Value != "exec" && c.words[1].Value != "x" {
			return plain
		}
		i = 2
	}
	for ; i < len(c.words); i++ {
		v := c.words[i].Value
		if v == "--" {
			return plain
		}
		if (v == "-c" || v == "--call") && i+1 < len(c.words) {
			return p.nested(c, Wrapper{Name: path.Base(c.words[0].Value) + " -c", Args: slices.Clone(c.words[:i])}, c.words[i+1], nil, false)
		}
		if after, ok := strings.CutPrefix(v, "--call="); ok {
			return p.nested(c, Wrapper{Name: path.Base(c.words[0].Value) + " -c", Args: slices.Clone(c.words[:i])}, Word{Value: after, Dynamic: c.words[i].Dynamic, Guess: strings.TrimPrefix(c.words[i].Guess, "--call=")}, nil, false)
		}
	}
	return plain
}

var xargsOpts = optSpec{
	flags:    "0oprtx",
	args:     "adEILnPs",
	optional: "eil",
	long:     " null open-tty interactive no-run-if-empty verbose exit show-limits help version eof replace max-lines ",
	longArgs: " arg-file delimiter max-args max-procs max-chars process-slot-var ",
}

// xargsWrapper handles xargs: its command gets more arguments from the
// input, or with -I has its replacement string substituted.
func xargsWrapper(p *parser, c *call) unwrapped {
	s := xargsOpts.scan(c.words, 1)
	repl := ""
	if w, ok := s.opts["I"]; ok {
		repl = w.Value
	}
	if w, ok := s.opts["i"]; ok {
		repl = cmpOr(w.Value, "{}")
	}
	if w, ok := s.opts["--replace"]; ok {
		repl = cmpOr(w.Value, "{}")
	}
	c.apply("xargs", xargsOpts, s)
	c.wrap("xargs", s.end)
	if len(c.words) == 0 {
		c.words = []Word{{Value: "echo"}}
	}
	if repl == "" {
		c.extra = true
		return inner
	}
	c.words = slices.Clone(c.words)
	for i, w := range c.words {
		if strings.Contains(w.Value, repl) {
			c.words[i] = Word{Value: w.Value, Dynamic: true, Guess: strings.ReplaceAll(w.guessed(), repl, "")}
		}
	}
	return inner
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// findWrapper records find itself and each command of its -exec, -execdir,
// -ok and -okdir actions; {} stands for a path under find's start path.
func findWrapper(p *parser, c *call) unwrapped {
	w := c.words
	i := 1
	for i < len(w) && !w[i].Dynamic {
		v := w[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
			continue
		}
		if v == "-D" {
			i += 2
			continue
		}
		break
	}
	var starts []Word
	for ; i < len(w); i++ {
		v := w[i].Value
		if !w[i].Dynamic && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			break
		}
		starts = append(starts, w[i])
	}
	base := ""
	switch {
	case len(starts) == 0:
		base = "."
	case len(starts) == 1 && !starts[0].Dynamic:
		base = starts[0].Value
		if starts[0].Home {
			base = "~" + strings.TrimPrefix(base, "~")
		} else if strings.HasPrefix(base, "~") {
			base = "./" + base
		}
	}
	p.record(c)
	for j := i; j < len(w); j++ {
		action := w[j].Value
		if w[j].Dynamic || action != "-exec" && action != "-execdir" && action != "-ok" && action != "-okdir" {
			continue
		}
		k := j + 1
		for ; k < len(w); k++ {
			v := w[k].Value
			if v == ";" || v == "+" && k > j+1 && w[k-1].Value == "{}" {
				break
			}
		}
		sub := &call{assigns: c.assigns, f: c.f, dynamic: c.dynamic}
		for _, a := range w[j+1 : min(k, len(w))] {
			switch {
			case a.Value == "{}":
				a = Word{Value: "{}", Dynamic: true, Base: base, Guess: "{}"}
			case strings.Contains(a.Value, "{}"):
				a = Word{Value: a.Value, Dynamic: true, Guess: strings.ReplaceAll(a.guessed(), "{}", "")}
			}
			sub.words = append(sub.words, a)
		}
		sub.f.wrappers = append(slices.Clip(c.f.wrappers), Wrapper{Name: "find " + action, Args: slices.Clone(w[:j+1])})
		if action == "-execdir" || action == "-okdir" {
			sub.f.dirsUnknown = true
		}
		if len(sub.words) > 0 {
			p.call(sub)
		}
		j = k
	}
	return done
}

// fdArgs are fd's short options that take a value.
const fdArgs = "etdESojcC"

// fdWrapper records fd itself and the command of its -x (--exec) or -X
// (--exec-batch): the words after it up to a ";". A placeholder ({}, {/},
// {//}, {.}, {/.}) stands for a path under the search path; without one
// the paths are appended.
func fdWrapper(p *parser, c *call) unwrapped {
	w := c.words
	var ops []Word
	base, unknownDir := "", false
	p.record(c)
	for i := 1; i < len(w); i++ {
		a := w[i]
		v := a.Value
		if a.Dynamic || !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, a)
			continue
		}
		if v == "--" {
			ops = append(ops, w[i+1:]...)
			break
		}
		name, val, eq := strings.Cut(v, "=")
		action, first := "", Word{}
		switch {
		case name == "--exec" || name == "--exec-batch":
			action = name
			if eq {
				first = Word{Value: val}
			}
		case name == "--search-path":
			if !eq && i+1 < len(w) {
				i++
				val = w[i].Value
			}
			base = val
		case name == "--base-directory":
			unknownDir = true
			if !eq {
				i++
			}
		case strings.HasPrefix(v, "--"):
			switch name {
			case "--extension", "--type", "--max-depth", "--min-depth", "--exact-depth", "--exclude", "--size",
				"--changed-within", "--changed-before", "--change-newer-than", "--change-older-than", "--newer", "--older",
				"--owner", "--threads", "--max-results", "--path-separator", "--color", "--ignore-file", "--batch-size",
				"--format", "--max-buffer-time", "--and", "--hyperlink":
				if !eq {
					i++
				}
			}
		default:
			for k := 1; k < len(v); k++ {
				switch ch := v[k]; {
				case ch == 'x' || ch == 'X':
					action = "--exec"
					if ch == 'X' {
						action = "--exec-batch"
					}
					if k+1 < len(v) {
						first = Word{Value: v[k+1:]}
					}
				case strings.IndexByte(fdArgs, ch) >= 0:
					if k+1 == len(v) {
						i++
					}
				default:
					continue
				}
				break
			}
		}
		if action == "" {
			continue
		}
		k := i + 1
		for k < len(w) && (w[k].Dynamic || w[k].Value != ";") {
			k++
		}
		words := w[i+1 : k]
		if first.Value != "" {
			words = append([]Word{first}, words...)
		}
		fdExec(p, c, Wrapper{Name: "fd " + action, Args: slices.Clone(w[:i+1])}, words, &base, ops, unknownDir)
		i = k
	}
	return done
}

// fdExec records the command of fd's -x or -X.
func fdExec(p *parser, c *call, wr Wrapper, words []Word, base *string, ops []Word, unknownDir bool) {
	if *base == "" {
		switch {
		case len(ops) <= 1:
			*base = "."
		case len(ops) == 2 && !ops[1].Dynamic:
			*base = ops[1].Value
			if ops[1].Home {
				*base = "~" + strings.TrimPrefix(*base, "~")
			} else if strings.HasPrefix(*base, "~") {
				*base = "./" + *base
			}
		}
	}
	sub := &call{assigns: c.assigns, f: c.f, dynamic: c.dynamic}
	placeholder := false
	for _, a := range words {
		if !a.Dynamic {
			for _, ph := range []string{"{}", "{/}", "{//}", "{.}", "{/.}"} {
				if strings.Contains(a.Value, ph) {
					placeholder = true
					if a.Value == "{}" || a.Value == "{.}" {
						a = Word{Value: a.Value, Dynamic: true, Base: *base, Guess: a.Value}
					} else {
						a = Word{Value: a.Value, Dynamic: true, Guess: strings.ReplaceAll(a.guessed(), ph, "")}
					}
					break
				}
			}
		}
		sub.words = append(sub.words, a)
	}
	if len(sub.words) == 0 {
		return
	}
	sub.extra = !placeholder
	sub.f.wrappers = append(slices.Clip(c.f.wrappers), wr)
	if unknownDir {
		sub.f.dirsUnknown = true
	}
	p.call(sub)
}

// compgenWrapper handles compgen -C CMD, which runs CMD, and -W LIST,
// whose command substitutions bash runs as it splits the list.
func compgenWrapper(p *parser, c *call) unwrapped {
	w := c.words
	for i := 1; i+1 < len(w); i++ {
		if w[i].Dynamic || !strings.HasPrefix(w[i].Value, "-") {
			continue
		}
		switch {
		case strings.HasSuffix(w[i].Value, "W") && !w[i+1].Dynamic && looksLikeCode(w[i+1].Value) && c.dynamic == "":
			c.dynamic = "compgen -W runs the command substitutions of its word list: " + w[i+1].Value
		case strings.HasSuffix(w[i].Value, "C"):
			return p.nested(c, Wrapper{Name: "compgen -C", Args: slices.Clone(w[:i+1])}, w[i+1], nil, true)
		}
	}
	return plain
}

// mapfileWrapper handles mapfile -C CMD (readarray -C CMD), which runs CMD
// with an index and a line appended every -c lines.
func mapfileWrapper(p *parser, c *call) unwrapped {
	sp := optSpec{flags: "t", args: "dnOsuCc"}
	s := sp.scan(c.words, 1)
	cb, ok := s.opts["C"]
	if !ok {
		return plain
	}
	c.f.extra = true
	return p.nested(c, Wrapper{Name: path.Base(c.words[0].Value) + " -C", Args: slices.Clone(c.words[:1])}, cb, nil, true)
}

// runs walks text that c's program runs as a shell command (tar
// --to-command=CMD, rsync -e CMD), with the program as its wrapper. The
// program itself is recorded and judged by the caller.
func (p *parser) runs(c *call, label string, script Word) {
	f := c.nestedFrame(Wrapper{Name: label, Args: slices.Clone(c.words[:1])}, nil)
	switch {
	case p.depth >= maxDepth:
		if c.dynamic == "" {
			c.dynamic = "script strings nested too deeply"
		}
	case script.Dynamic:
		if c.dynamic == "" {
			c.dynamic = label + " runs text known only at run time: " + script.Value
		}
		f.dynamic = c.dynamic
		p.walkString(script.Guess, f)
	default:
		if err := p.walkString(script.Value, f); err != nil && c.dynamic == "" {
			c.dynamic = label + " runs a command that does not parse: " + err.Error()
		}
	}
}

// runsArgv records the command at c.words[i:], which c's program runs
// (git bisect run CMD, gdb --args CMD), with the program as its wrapper.
func (p *parser) runsArgv(c *call, label string, i int) {
	if i >= len(c.words) {
		return
	}
	sub := &call{assigns: c.assigns, f: c.f, dynamic: c.dynamic, words: slices.Clone(c.words[i:])}
	sub.f.wrappers = append(slices.Clip(c.f.wrappers), Wrapper{Name: label, Args: slices.Clone(c.words[:i])})
	p.call(sub)
}

// optValues returns the values of the options of words (from i on) that
// are a command: a short option ("I", its value attached or next), or a
// long one ("--to-command", its value after = or next).
func optValues(words []Word, i int, short, long string) []Word {
	var out []Word
	for ; i < len(words); i++ {
		w := words[i]
		v := w.Value
		if w.Dynamic || !strings.HasPrefix(v, "-") {
			continue
		}
		if v == "--" {
			break
		}
		next := func() {
			if i+1 < len(words) {
				out = append(out, words[i+1])
				i++
			}
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v, "=")
			if name != "--" && strings.Contains(long, " "+name+" ") {
				if eq {
					out = append(out, Word{Value: val})
				} else {
					next()
				}
			}
			continue
		}
		if k := strings.IndexAny(v[1:], short); short != "" && k >= 0 && k+2 == len(v) {
			next()
		} else if short != "" && len(v) > 2 && strings.IndexByte(short, v[1]) >= 0 {
			out = append(out, Word{Value: v[2:]})
		}
	}
	return out
}

// tarRuns: tar --to-command, -I (--use-compress-program), -F
// (--info-script, --new-volume-script), --rsh-command and
// --checkpoint-action=exec= run commands.
func tarRuns(p *parser, c *call) unwrapped {
	for _, w := range optValues(c.words, 1, "IF", " --to-command --use-compress-program --info-script --new-volume-script --rsh-command ") {
		p.runs(c, "tar", w)
	}
	for _, w := range optValues(c.words, 1, "", " --checkpoint-action ") {
		if cmd, ok := strings.CutPrefix(w.Value, "exec="); ok {
			p.runs(c, "tar", Word{Value: cmd, Dynamic: w.Dynamic, Guess: strings.TrimPrefix(w.Guess, "exec=")})
		}
	}
	return plain
}

// rsyncRuns: rsync -e (--rsh) runs a command.
func rsyncRuns(p *parser, c *call) unwrapped {
	for _, w := range optValues(c.words, 1, "e", " --rsh ") {
		p.runs(c, "rsync -e", w)
	}
	return plain
}

// sshRuns: ssh, scp and sftp -o ProxyCommand=CMD (LocalCommand,
// KnownHostsCommand) run CMD; scp and sftp -S PROGRAM run PROGRAM.
func sshRuns(p *parser, c *call) unwrapped {
	for _, w := range optValues(c.words, 1, "o", "") {
		key, val, ok := strings.Cut(strings.TrimSpace(w.Value), "=")
		if !ok {
			key, val, _ = strings.Cut(strings.TrimSpace(w.Value), " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			p.runs(c, "ssh -o "+strings.TrimSpace(key), Word{Value: val, Dynamic: w.Dynamic, Guess: val})
		}
	}
	if b := path.Base(c.words[0].Value); b == "scp" || b == "sftp" {
		for _, w := range optValues(c.words, 1, "S", "") {
			p.runs(c, b+" -S", w)
		}
	}
	return plain
}

// zipRuns: zip -TT (--unzip-command) runs a command to test the archive.
func zipRuns(p *parser, c *call) unwrapped {
	for i, w := range c.words {
		if i > 0 && !w.Dynamic && (w.Value == "-TT" || w.Value == "--unzip-command") && i+1 < len(c.words) {
			p.runs(c, "zip -TT", c.words[i+1])
		} else if v, ok := strings.CutPrefix(w.Value, "--unzip-command="); ok && !w.Dynamic {
			p.runs(c, "zip -TT", Word{Value: v})
		}
	}
	return plain
}

// gitRuns: git rebase -x (--exec), git difftool -x (--extcmd) and git
// submodule foreach run a shell command; git bisect run runs a program.
func gitRuns(p *parser, c *call) unwrapped {
	cmd := gitCommand(c.words[1:])
	if len(cmd) < 2 {
		return plain
	}
	switch cmd[0].Value {
	case "rebase":
		for _, w := range optValues(cmd, 1, "x", " --exec ") {
			p.runs(c, "git rebase -x", w)
		}
	case "difftool":
		for _, w := range optValues(cmd, 1, "x", " --extcmd ") {
			p.runs(c, "git difftool -x", w)
		}
	case "submodule":
		for i := 1; i < len(cmd); i++ {
			if !cmd[i].Dynamic && cmd[i].Value == "foreach" {
				j := i + 1
				for j < len(cmd) && !cmd[j].Dynamic && strings.HasPrefix(cmd[j].Value, "-") {
					j++
				}
				if j < len(cmd) {
					p.runs(c, "git submodule foreach", joinWords(cmd[j:]))
				}
				break
			}
		}
	case "bisect":
		sub := 1 + parseGitGlobals(c.words[1:]).sub
		if !cmd[1].Dynamic && cmd[1].Value == "run" {
			if c.words[sub].Value == "bisect" {
				p.runsArgv(c, "git bisect run", sub+2)
			} else if c.dynamic == "" {
				c.dynamic = "git bisect run through an alias"
			}
		}
	}
	return plain
}

// gdbRuns: gdb --args PROGRAM ARGS runs the program; -ex 'shell CMD' (or
// '!CMD') runs CMD.
func gdbRuns(p *parser, c *call) unwrapped {
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		switch {
		case w.Dynamic:
		case w.Value == "--args" || w.Value == "-args":
			p.runsArgv(c, "gdb --args", i+1)
			return plain
		case (w.Value == "-ex" || w.Value == "--ex" || w.Value == "-eval-command" || w.Value == "--eval-command") && i+1 < len(c.words):
			cmd := strings.TrimSpace(c.words[i+1].Value)
			if rest, ok := strings.CutPrefix(cmd, "shell"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				p.runs(c, "gdb -ex shell", Word{Value: rest, Dynamic: c.words[i+1].Dynamic, Guess: rest})
			} else if rest, ok := strings.CutPrefix(cmd, "!"); ok {
				p.runs(c, "gdb -ex shell", Word{Value: rest, Dynamic: c.words[i+1].Dynamic, Guess: rest})
			}
			i++
		}
	}
	return plain
}

// perfRuns: perf stat, record, trace and c2c/mem record run their
// command operand.
func perfRuns(p *parser, c *call) unwrapped {
	if len(c.words) < 3 || c.words[1].Dynamic {
		return plain
	}
	switch c.words[1].Value {
	case "stat", "record", "trace":
	default:
		return plain
	}
	sp := optSpec{flags: "aAdgnqsvBT", args: "eCpPtorFcGjImMuxD", long: " all-cpus no-inherit verbose quiet ", longArgs: " event cpu pid tid output repeat freq call-graph cgroup delay "}
	s := sp.scan(c.words, 2)
	if s.unknown != "" {
		if c.dynamic == "" {
			c.dynamic = "unknown option " + s.unknown + " to perf"
		}
		return plain
	}
	if s.end < len(c.words) {
		c.apply("perf", sp, s)
		c.wrap("perf "+c.words[1].Value, s.end)
		return inner
	}
	return plain
}

// edRuns: ed runs the shell commands (!cmd) of the script it reads, here
// from a here-document or here-string.
func edRuns(p *parser, c *call) unwrapped {
	if c.in != nil && c.in.doc != nil && c.dynamic == "" && (c.in.doc.Dynamic || strings.Contains(c.in.doc.Value, "!")) {
		c.dynamic = "ed runs the shell commands of its input"
	}
	return plain
}

// goRuns: go build, test, run and vet -exec or -toolexec CMD run CMD (with
// the program built, or each tool, as its arguments).
func goRuns(p *parser, c *call) unwrapped {
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		if w.Dynamic || !strings.HasPrefix(w.Value, "-") {
			continue
		}
		if w.Value == "--" {
			break
		}
		name, val, eq := strings.Cut(strings.TrimPrefix(w.Value, "-"), "=")
		name = strings.TrimPrefix(name, "-")
		if name != "exec" && name != "toolexec" {
			continue
		}
		script := Word{Value: val}
		if !eq {
			if i+1 >= len(c.words) {
				break
			}
			i++
			script = c.words[i]
		}
		p.runs(c, "go -"+name, script)
	}
	return plain
}
