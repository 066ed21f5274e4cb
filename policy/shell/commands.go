package shell

import (
	"path"
	"strings"
)

// What the classifier knows about commands. A command it does not know is
// WorkspaceWrite, never ReadOnly.

// readOnly commands only read and print, whatever their arguments (their
// redirections are judged separately).
var readOnly = set(
	// files and text
	"ls", "dir", "vdir", "cat", "tac", "head", "tail", "less", "more", "most", "wc", "grep", "egrep", "fgrep",
	"ag", "ack", "stat", "file", "basename", "dirname", "realpath", "readlink", "du", "df", "cut", "tr",
	"diff", "cmp", "comm", "column", "jq", "nl", "fold", "fmt", "paste", "join", "expand", "unexpand", "rev",
	"look", "strings", "od", "hexdump", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum",
	"b2sum", "cksum", "sum", "shasum", "md5", "base32", "base64", "basenc", "zcat", "bzcat", "xzcat", "zstdcat",
	"lz4cat", "zgrep", "zegrep", "zfgrep", "zless", "zmore", "zdiff", "bzgrep", "xzgrep", "lsattr", "namei",
	"numfmt", "csvlook", "wdiff", "colordiff", "icdiff", "delta", "bat", "batcat", "fd", "fdfind", "locate",
	"plocate", "mlocate", "fzf", "glow", "mdcat", "tokei", "cloc", "scc", "zipinfo", "lsar",
	"nm", "objdump", "readelf", "size", "ldd", "otool", "c++filt", "addr2line", "xmllint", "gron",
	// the shell and its builtins
	"echo", "printf", "pwd", "true", "false", "test", "[", ":", "cd", "pushd", "popd", "dirs", "read", "wait",
	"jobs", "times", "type", "command", "builtin", "eval", "exec", "nohup", "nice", "timeout", "watch",
	"xargs", "stdbuf", "setsid", "unbuffer", "busybox", "which", "whereis", "whence", "unset", "shift", "exit", "return", "break",
	"continue", "getopts", "mapfile", "readarray", "set", "shopt", "ulimit", "umask", "unalias", "compgen",
	"complete", "caller", "history", "fc", "local", "declare", "typeset", "readonly", "export", "let",
	"sleep", "usleep", "printenv", "env", "tput", "clear", "tty", "logname", "help", "disown", "suspend",
	// the system, read
	"id", "whoami", "groups", "users", "uname", "uptime", "w", "who", "last", "ps", "pgrep", "pidof", "top",
	"htop", "btop", "free", "vmstat", "iostat", "mpstat", "lscpu", "lsblk", "lsof", "lsusb", "lspci", "lsmod",
	"modinfo", "nproc", "arch", "locale", "cal", "bc", "dc", "expr", "seq", "yes", "getconf", "getent",
	"findmnt", "blkid", "dig", "nslookup", "host", "ping", "ping6", "traceroute", "tracepath", "mtr",
	"netstat", "ss", "whois", "sw_vers", "system_profiler", "vm_stat", "man", "info", "apropos", "whatis",
	"tldr", "cheat", "lsb_release", "hostid", "sensors", "nvidia-smi", "iotop", "pstree", "stty",
	"shellcheck", "hadolint", "actionlint", "yamllint", "jsonlint", "tsc-version", "date", "hostname",
	"dmesg", "journalctl", "sysctl",
)

// workspaceWrite lists commands known to change the workspace or run the
// project's code (builds, tests, formatters, editors), with the reason
// their findings give.
var workspaceWrite = map[string]string{
	"make": "builds", "gmake": "builds", "cmake": "builds", "ninja": "builds", "meson": "builds",
	"bazel": "builds", "bazelisk": "builds", "buck": "builds", "buck2": "builds", "scons": "builds",
	"gradle": "builds", "gradlew": "builds", "mvn": "builds", "mvnw": "builds", "ant": "builds", "sbt": "builds",
	"gcc": "compiles", "g++": "compiles", "cc": "compiles", "c++": "compiles", "clang": "compiles",
	"clang++": "compiles", "rustc": "compiles", "javac": "compiles", "kotlinc": "compiles", "swiftc": "compiles",
	"tsc": "compiles", "esbuild": "builds", "vite": "builds", "webpack": "builds", "rollup": "builds",
	"turbo": "builds", "nx": "builds", "swift": "builds", "dotnet": "builds", "zig": "builds", "ld": "links",
	"as": "assembles", "ar": "writes an archive", "ranlib": "writes an archive", "strip": "rewrites binaries",
	"pytest": "runs tests", "jest": "runs tests", "vitest": "runs tests", "mocha": "runs tests",
	"rspec": "runs tests", "phpunit": "runs tests", "tox": "runs tests", "nox": "runs tests",
	"playwright": "runs tests", "cypress": "runs tests", "ctest": "runs tests", "bats": "runs tests",
	"prettier": "formats files", "eslint": "lints (runs plugins)", "black": "formats files", "ruff": "lints or formats files",
	"isort": "formats files", "rustfmt": "formats files", "clang-format": "formats files", "mypy": "type-checks (writes a cache)",
	"pyright": "type-checks", "biome": "formats files", "stylelint": "lints", "golangci-lint": "lints (writes a cache)",
	"staticcheck": "lints", "pre-commit": "runs hooks", "terraform": "manages infrastructure",
	"vim": "edits files", "vi": "edits files", "nvim": "edits files", "nano": "edits files", "emacs": "edits files",
	"code": "opens an editor", "ed": "edits files", "patch": "patches files",
	"split": "writes files", "csplit": "writes files", "mktemp": "creates a temporary file", "mkfifo": "creates a pipe",
	"ssh": "connects to another machine", "scp": "copies over the network", "sftp": "copies over the network",
	"rsync": "copies files", "nc": "opens network connections", "ncat": "opens network connections",
	"socat": "opens network connections", "telnet": "opens network connections", "ftp": "opens network connections",
	"open": "opens a file with another application", "xdg-open": "opens a file with another application",
	"npx": "runs a package (may download it)", "bunx": "runs a package (may download it)",
	"pkill": "signals processes", "killall": "signals processes", "git-lfs": "manages large files",
	"gh": "uses the GitHub API", "glab": "uses the GitLab API", "hub": "uses the GitHub API",
	"sqlite3": "opens a database", "psql": "connects to a database", "mysql": "connects to a database",
	"redis-cli": "connects to a database", "mongosh": "connects to a database",
}

// interpreters run a program given as a file, inline code, or their input.
var interpreters = set("python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
	"ruby", "perl", "php", "lua", "luajit", "Rscript", "julia", "tclsh", "groovy", "elixir", "erl", "java")

// inlineCode are the options that give an interpreter its code as text.
var inlineCode = set("-c", "-e", "-E", "--eval", "-p", "--print", "-r")

// downloaders are commands whose output comes from the network.
var downloaders = set("curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat", "netcat",
	"socat", "ftp", "tftp", "lftp", "ssh", "lynx", "w3m", "links", "gh", "aws", "gsutil", "scp")

// dangerous commands change the system whatever their arguments.
var dangerous = map[string]string{
	"mkfs": "creates a file system", "mke2fs": "creates a file system", "mkswap": "formats swap",
	"wipefs": "erases file system signatures", "blkdiscard": "discards a device", "badblocks": "tests a device",
	"hdparm": "changes disk settings", "cryptsetup": "manages encrypted devices", "losetup": "manages loop devices",
	"mdadm": "manages RAID devices", "pvcreate": "manages volumes", "vgcreate": "manages volumes",
	"lvcreate": "manages volumes", "lvremove": "manages volumes", "vgremove": "manages volumes",
	"pvremove": "manages volumes", "zpool": "manages storage pools", "zfs": "manages file systems",
	"btrfs": "manages file systems", "umount": "unmounts file systems", "swapoff": "disables swap",
	"insmod": "loads a kernel module", "rmmod": "unloads a kernel module", "modprobe": "loads kernel modules",
	"depmod": "changes kernel module data", "kexec": "boots another kernel",
	"shutdown": "shuts the machine down", "reboot": "reboots the machine", "halt": "halts the machine",
	"poweroff": "powers the machine off", "init": "changes the run level", "telinit": "changes the run level",
	"killall5": "signals every process", "chattr": "changes file attributes", "setcap": "grants capabilities",
	"chcon": "changes security contexts", "setenforce": "changes SELinux enforcement",
	"useradd": "manages users", "userdel": "manages users", "usermod": "manages users", "adduser": "manages users",
	"deluser": "manages users", "groupadd": "manages groups", "groupdel": "manages groups", "groupmod": "manages groups",
	"passwd": "changes passwords", "chpasswd": "changes passwords", "chsh": "changes a login shell",
	"chfn": "changes user information", "gpasswd": "manages groups", "newgrp": "changes group",
	"visudo": "edits sudo rules", "vipw": "edits the user database", "vigr": "edits the group database",
	"at": "schedules a command outside this session", "batch": "schedules a command outside this session",
	"atrm": "removes scheduled commands", "systemd-run": "runs a command as a service outside the sandbox",
	"nsenter": "enters other namespaces", "unshare": "changes namespaces", "setpriv": "changes privileges",
	"capsh": "changes capabilities", "pivot_root": "changes the root file system", "ldconfig": "changes the library cache",
	"update-alternatives": "changes system alternatives", "update-grub": "changes the boot loader",
	"grub-install": "changes the boot loader", "efibootmgr": "changes boot entries", "osascript": "automates other applications",
	"screen": "controls terminal sessions outside the sandbox", "tmux": "controls terminal sessions outside the sandbox",
	"pkexec": "runs as another user", "sudo": "runs as another user", "su": "runs as another user",
	"doas": "runs as another user", "runuser": "runs as another user", "sudoedit": "edits files as another user",
	"chroot": "changes the root directory",
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// systemBinDirs are where a path-qualified command is the system's own.
var systemBinDirs = set("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin")

// judges are the functions that classify the commands whose level
// depends on their arguments, by command name. Filled by init: the judges
// themselves classify commands, through it.
var judges map[string]func(j *judge)

func init() {
	judges = map[string]func(j *judge){
		"rm": judgeRm, "rmdir": judgeRmdir, "unlink": judgeRmdir, "shred": judgeShred,
		"cp": judgeCpMv, "mv": judgeCpMv, "ln": judgeLn, "install": judgeInstall,
		"mkdir":    judgeTargets(optSpec{flags: "pv", args: "mZ", long: " parents verbose ", longArgs: " mode context "}, "creates"),
		"touch":    judgeTargets(optSpec{flags: "acfhm", args: "dtr", long: " no-create no-dereference ", longArgs: " date reference time "}, "touches"),
		"truncate": judgeTargets(optSpec{flags: "co", args: "rs", long: " no-create io-blocks ", longArgs: " reference size "}, "truncates"),
		"tee":      judgeTee, "dd": judgeDd,
		"chmod": judgeChmod, "chown": judgeChown, "chgrp": judgeChown,
		"setfacl": judgeTargets(optSpec{flags: "bkndRLPv", args: "mMxX", long: " remove-all remove-default no-mask recursive logical physical test ", longArgs: " modify modify-file remove remove-file set set-file "}, "changes the ACL of"),
		"sed":     judgeSed, "awk": judgeAwk, "gawk": judgeAwk, "mawk": judgeAwk, "nawk": judgeAwk,
		"perl": judgePerl,
		"find": judgeFind, "sort": judgeSort, "uniq": judgeUniq, "tree": judgeTree, "xxd": judgeXxd,
		"iconv": judgeOutputOpt("o", "--output"), "yq": judgeYq, "rg": judgeRg,
		"history": judgeHistory, "less": judgeLess, "xmllint": judgeOutputOpt("", "--output"),
		"cloc": judgeOutputOpt("", "--report-file"), "scc": judgeOutputOpt("", "--output"),
		"tar": judgeTar, "unzip": judgeUnzip, "zip": judgeZip,
		"gzip": judgeCompress, "gunzip": judgeCompress, "bzip2": judgeCompress, "bunzip2": judgeCompress,
		"xz": judgeCompress, "unxz": judgeCompress, "zstd": judgeCompress, "unzstd": judgeCompress,
		"lz4": judgeCompress, "compress": judgeCompress, "uncompress": judgeCompress,
		"curl": judgeCurl, "wget": judgeWget,
		"kill": judgeKill,
		"date": judgeDate, "hostname": judgeHostname, "dmesg": judgeDmesg, "journalctl": judgeJournalctl,
		"sysctl": judgeSysctl, "ip": judgeIP, "ifconfig": judgeIfconfig, "route": judgeRoute,
		"mount": judgeMount, "swapon": judgeSwapon, "fdisk": judgeFdisk, "sfdisk": judgeFdisk,
		"parted": judgeFdisk, "gdisk": judgeFdisk, "cfdisk": judgeFdisk,
		"crontab": judgeCrontab, "systemctl": judgeSystemctl, "service": judgeService, "launchctl": judgeLaunchctl,
		"iptables": judgeIptables, "ip6tables": judgeIptables, "nft": judgeNft, "ufw": judgeUfw,
		"firewall-cmd": judgeFirewallCmd,
		"alias":        judgeAlias, "hash": judgeHash, "enable": judgeEnable, "export": judgeExport,
		"declare": judgeExport, "typeset": judgeExport, "local": judgeExport, "readonly": judgeExport,
		"trap": func(j *judge) {},
		"git":  judgeGit, "go": judgeGo, "gofmt": judgeGofmt,
		"npm": judgeNpm, "pnpm": judgeNpm, "yarn": judgeNpm, "bun": judgeBun,
		"pip": judgePip, "pip3": judgePip, "pipx": judgePipx, "uv": judgeUv, "poetry": judgePoetry,
		"cargo": judgeCargo, "rustup": judgeRustup,
		"docker": judgeDocker, "podman": judgeDocker, "nerdctl": judgeDocker,
		"kubectl": judgeKubectl, "oc": judgeKubectl, "helm": judgeHelm,
		"terraform": judgeTerraform, "tofu": judgeTerraform,
		"aws": judgeAws, "gcloud": judgeGcloud, "az": judgeAz, "gh": judgeGh,
		"apt": judgeApt, "apt-get": judgeApt, "aptitude": judgeApt, "apt-cache": judgeReadOnly,
		"dpkg": judgeDpkg, "rpm": judgeRpm, "dnf": judgeDnf, "yum": judgeDnf, "zypper": judgeZypper,
		"pacman": judgePacman, "apk": judgeApk, "brew": judgeBrew, "snap": judgeSnap, "flatpak": judgeFlatpak,
		"port": judgePort, "nix-env": judgeNixEnv,
		"ssh-keygen": judgeSshKeygen,
	}
	for _, sh := range shells {
		judges[sh] = judgeShell
	}
	for name := range interpreters {
		judges[name] = judgeInterpreter
	}
	judges["source"] = judgeSource
	judges["."] = judgeSource
}

func judgeReadOnly(j *judge) {}

// command judges the command itself, after its wrappers, assignments and
// redirections.
func (j *judge) command() {
	c := j.c
	name := c.Name.Value
	base := c.Base()
	if strings.Contains(name, "/") && !systemBinDirs[path.Dir(path.Clean(name))] {
		// a program chosen by path is whatever that file is
		j.needf(WorkspaceWrite, "runs the program %s", name)
		return
	}
	if strings.HasPrefix(base, "mkfs") {
		base = "mkfs"
	}
	if fn := judges[base]; fn != nil {
		fn(j)
		return
	}
	if why, ok := dangerous[base]; ok {
		j.need(DangerFullAccess, why)
		return
	}
	if readOnly[base] {
		return
	}
	if why := workspaceWrite[base]; why != "" {
		j.need(WorkspaceWrite, why)
		return
	}
	if c.Function {
		j.need(WorkspaceWrite, "calls a function of the script (or an unknown command)")
		return
	}
	j.need(WorkspaceWrite, "unknown command")
}

// operands reads GNU-style options anywhere among args (they permute) and
// returns the operands and options.
func operands(args []Word, sp optSpec) ([]Word, map[string]Word) {
	opts := map[string]Word{}
	var ops []Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic || !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, a)
			continue
		}
		if v == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		s := sp.scan(args[i:], 0)
		for k, w := range s.opts {
			opts[k] = w
		}
		if s.unknown != "" {
			opts["?"+s.unknown] = Word{}
		}
		i += max(s.end, 1) - 1
	}
	return ops, opts
}

func has(opts map[string]Word, names ...string) bool {
	for _, n := range names {
		if _, ok := opts[n]; ok {
			return true
		}
	}
	return false
}

func opt(opts map[string]Word, names ...string) (Word, bool) {
	for _, n := range names {
		if w, ok := opts[n]; ok {
			return w, true
		}
	}
	return Word{}, false
}

func judgeRm(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "fiIrRdv", long: " force interactive recursive dir verbose no-preserve-root preserve-root one-file-system "})
	rec := has(opts, "r", "R", "--recursive")
	j.fromInput("deletes")
	for _, w := range ops {
		j.delete(w, rec, "deletes")
	}
	j.floor("deletes files")
}

func judgeRmdir(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "pv", long: " parents verbose ignore-fail-on-non-empty "})
	j.fromInput("deletes")
	for _, w := range ops {
		j.delete(w, false, "deletes")
	}
	j.floor("deletes files")
}

func judgeShred(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "fuvxz", args: "ns", long: " force verbose exact zero remove ", longArgs: " iterations size random-source "})
	j.fromInput("shreds")
	for _, w := range ops {
		j.write(w, "shreds", change)
	}
	j.floor("overwrites files")
}

// judgeTargets judges a command whose operands are all written.
func judgeTargets(sp optSpec, verb string) func(j *judge) {
	return func(j *judge) {
		ops, _ := operands(j.c.Args, sp)
		for _, w := range ops {
			j.write(w, verb, change)
		}
		j.fromInput(verb)
		j.floor(verb + " files")
	}
}

var cpSpec = optSpec{
	flags:    "aAbdfHiLlnPpRrsTuvxZ",
	args:     "St",
	long:     " archive attributes-only backup copy-contents force interactive link dereference no-clobber no-dereference parents recursive remove-destination strip-trailing-slashes symbolic-link no-target-directory update verbose one-file-system debug preserve no-preserve reflink sparse context ",
	longArgs: " suffix target-directory ",
}

func judgeCpMv(j *judge) {
	ops, opts := operands(j.c.Args, cpSpec)
	verb := "copies to"
	if j.c.Base() == "mv" {
		verb = "moves to"
	}
	dest, ok := opt(opts, "t", "--target-directory")
	switch {
	case ok:
	case len(ops) >= 2:
		dest, ops = ops[len(ops)-1], ops[:len(ops)-1]
	case j.c.ExtraArgs:
		j.needf(DangerFullAccess, "%s a path read from the input", verb)
	}
	if j.c.ExtraArgs && (!ok || j.c.Base() == "mv") {
		j.fromInput(strings.TrimSuffix(verb, " to"))
	}
	if dest.Value != "" || dest.Dynamic {
		j.write(dest, verb, change)
	}
	if j.c.Base() == "mv" {
		for _, w := range ops {
			j.delete(w, false, "moves")
		}
	}
	j.floor(strings.TrimSuffix(verb, " to") + " files")
}

func judgeLn(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "bdfFinLPrsTv", args: "St", long: " backup directory force interactive logical no-dereference physical relative symbolic no-target-directory verbose ", longArgs: " suffix target-directory "})
	var targets []Word
	var links []Word
	if dir, ok := opt(opts, "t", "--target-directory"); ok {
		targets = ops
		for range ops {
			links = append(links, dir)
		}
	} else if len(ops) == 1 {
		targets = ops
		links = []Word{{Value: path.Base(ops[0].Value), Dynamic: ops[0].Dynamic}}
	} else if len(ops) >= 2 {
		targets = ops[:len(ops)-1]
		for range targets {
			links = append(links, ops[len(ops)-1])
		}
	}
	symbolic := has(opts, "s", "--symbolic")
	for i, t := range targets {
		j.write(links[i], "links", change)
		// a link out of the workspace lets later writes through it escape
		tw := t
		if symbolic && !t.Home && !path.IsAbs(t.Value) && !t.Dynamic {
			tw = Word{Value: path.Join(path.Dir(links[i].Value), t.Value), Home: links[i].Home}
		}
		paths, _, ok := j.resolve(tw)
		if !ok {
			j.needf(DangerFullAccess, "links to %s: path known only at run time", t.Value)
			continue
		}
		for _, p := range paths {
			if l, _ := j.where(p, false, change); l == DangerFullAccess {
				j.needf(DangerFullAccess, "links to %s: outside the workspace", t.Value)
			}
		}
	}
	j.floor("creates links")
}

func judgeInstall(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "bCcDdpsTv", args: "gmoStZ", long: " backup compare directory preserve-timestamps strip no-target-directory verbose ", longArgs: " group mode owner suffix target-directory context strip-program "})
	switch dest, ok := opt(opts, "t", "--target-directory"); {
	case has(opts, "d", "--directory"):
		for _, w := range ops {
			j.write(w, "creates", change)
		}
	case ok:
		j.write(dest, "installs to", change)
	case len(ops) >= 2:
		j.write(ops[len(ops)-1], "installs to", change)
	}
	j.floor("installs files")
}

func judgeTee(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "aip", long: " append ignore-interrupts ", longArgs: " output-error "})
	for _, w := range ops {
		j.write(w, "writes", data)
	}
}

func judgeDd(j *judge) {
	for _, a := range j.c.Args {
		if v, ok := strings.CutPrefix(a.Value, "of="); ok {
			w := a
			w.Value = v
			if w.Dynamic {
				w.Base = ""
			}
			w.Home = strings.HasPrefix(v, "~/") && !a.Dynamic
			j.write(w, "writes", data)
		}
	}
}

func judgeChmod(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "cfvR", long: " changes silent quiet verbose recursive no-preserve-root preserve-root ", longArgs: " reference "})
	// chmod -x, chmod -w are modes, not options
	for _, a := range j.c.Args {
		if !a.Dynamic && len(a.Value) > 1 && a.Value[0] == '-' && strings.Trim(a.Value[1:], "rwxXst") == "" {
			ops = append([]Word{a}, ops...)
		}
	}
	if !has(opts, "--reference") && len(ops) > 0 {
		mode := ops[0]
		ops = ops[1:]
		if mode.Dynamic || setuid(mode.Value) {
			j.needf(DangerFullAccess, "mode %s: sets the setuid or setgid bit", mode.Value)
		}
	}
	rec := has(opts, "R", "--recursive")
	j.fromInput("changes the mode of")
	for _, w := range ops {
		j.changeTree(w, rec, "changes the mode of")
	}
	j.floor("changes file modes")
}

func judgeChown(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "cfvhRHLP", long: " changes silent quiet verbose no-dereference dereference recursive no-preserve-root preserve-root ", longArgs: " reference from "})
	if !has(opts, "--reference") && len(ops) > 0 {
		ops = ops[1:]
	}
	rec := has(opts, "R", "--recursive")
	j.fromInput("changes the owner of")
	for _, w := range ops {
		j.changeTree(w, rec, "changes the owner of")
	}
	j.floor("changes file owners")
}

// fromInput: arguments appended at run time (xargs) are paths nobody has
// seen.
func (j *judge) fromInput(verb string) {
	if j.c.ExtraArgs {
		j.needf(DangerFullAccess, "%s paths read from the input", verb)
	}
}

// changeTree judges a metadata change, recursive ones like deletions.
func (j *judge) changeTree(w Word, recursive bool, verb string) {
	if recursive {
		if paths, under, ok := j.resolve(w); ok {
			for _, p := range paths {
				if why := j.wholeTree(p, under, false); why != "" {
					j.needf(DangerFullAccess, "%s %s: %s", verb, w.Value, why)
				}
			}
		}
	}
	j.write(w, verb, change)
}

// setuid reports a chmod mode that sets the setuid or setgid bit.
func setuid(mode string) bool {
	if isOctal(mode) {
		return len(mode) >= 4 && strings.ContainsAny(mode[len(mode)-4:len(mode)-3], "234567")
	}
	for _, clause := range strings.Split(mode, ",") {
		if i := strings.IndexAny(clause, "+="); i >= 0 && strings.Contains(clause[i:], "s") {
			return true
		}
	}
	return false
}

func isOctal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

var sedSpec = optSpec{
	flags:    "nrEsuzb",
	args:     "efl",
	optional: "i",
	long:     " quiet silent regexp-extended separate unbuffered null-data posix sandbox debug follow-symlinks binary in-place ",
	longArgs: " expression file line-length ",
}

func judgeSed(j *judge) {
	scripts, files, inPlace, sandbox, fromFile := sedArgs(j.c.Args)
	if inPlace {
		for _, f := range files {
			j.write(f, "edits", change)
		}
		j.fromInput("edits")
		j.floor("edits files in place")
	}
	if sandbox {
		return
	}
	if fromFile {
		j.need(WorkspaceWrite, "runs a sed script from a file")
	}
	for _, s := range scripts {
		if s.Dynamic {
			j.need(WorkspaceWrite, "sed script known only at run time")
			continue
		}
		writes, runs, ok := sedScript(s.Value)
		switch {
		case !ok:
			j.need(WorkspaceWrite, "sed script may write files or run commands")
		case runs:
			j.need(WorkspaceWrite, "sed script runs commands")
		}
		for _, w := range writes {
			j.write(Word{Value: w}, "sed writes", data)
		}
	}
}

// sedArgs reads sed's arguments: its scripts, its files, and its options.
func sedArgs(args []Word) (scripts, files []Word, inPlace, sandbox, fromFile bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case a.Dynamic || !strings.HasPrefix(v, "-") || v == "-":
			files = append(files, a)
			continue
		case v == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
			continue
		case v == "--sandbox":
			sandbox = true
			continue
		case len(v) > 2 && strings.HasPrefix("--in-place", strings.SplitN(v, "=", 2)[0]):
			// --in-place, or a prefix of it, which getopt_long takes
			inPlace = true
			continue
		}
		s := sedSpec.scan(args[i:], 0)
		if _, ok := s.opts["i"]; ok {
			inPlace = true
			// BSD sed -i '' takes the suffix as a separate, empty word
			if s.opts["i"].Value == "" && s.end < len(args[i:]) && args[i+s.end].Value == "" && !args[i+s.end].Dynamic {
				i++
			}
		}
		if w, ok := opt(s.opts, "e", "--expression"); ok {
			scripts = append(scripts, w)
		}
		if _, ok := opt(s.opts, "f", "--file"); ok {
			fromFile = true
		}
		i += max(s.end, 1) - 1
	}
	if len(scripts) == 0 && !fromFile && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	return scripts, files, inPlace, sandbox, fromFile
}

// runsText says why a sed or awk command runs shell commands its program
// text holds (sed e and s///e, awk system(), pipes and getline), which deny
// rules cannot see, or "".
func runsText(c *Command, stdin *Word) string {
	base, args := c.Base(), c.Args
	if interpreters[base] || strings.HasPrefix(base, "python") {
		// python3 -c 'import os; os.system("curl x")', perl -ne '`curl x`'
		for _, code := range interpreterCode(args, stdin) {
			if !code.Dynamic && spawns(code.Value) {
				return base + " code may run shell commands: " + code.Value
			}
		}
		return ""
	}
	switch base {
	case "dc":
		// dc -e '!curl x': GNU dc runs the rest of a line after ! in a shell
		for i, a := range args {
			if (a.Value == "-e" || a.Value == "--expression") && i+1 < len(args) && strings.Contains(args[i+1].Value, "!") ||
				strings.HasPrefix(a.Value, "--expression=") && strings.Contains(a.Value, "!") {
				return "dc runs shell commands (!): " + a.Value
			}
		}
		if stdin != nil && strings.Contains(stdin.Value, "!") {
			return "dc runs shell commands (!) from its input"
		}
	case "man":
		// man -H'curl x' ls runs the browser command, terminal or not
		for _, a := range args {
			if strings.HasPrefix(a.Value, "-H") && len(a.Value) > 2 || strings.HasPrefix(a.Value, "--html=") {
				return "man runs a browser command: " + a.Value
			}
		}
	case "make", "gmake":
		// make SHELL='curl x' runs every recipe line through curl
		for _, a := range args {
			if strings.HasPrefix(a.Value, "SHELL=") || strings.HasPrefix(a.Value, "MAKESHELL=") || a.Value == "--eval" || a.Value == "-E" || strings.HasPrefix(a.Value, "--eval=") {
				return "make runs its recipes through another program or evaluates text: " + a.Value
			}
		}
	case "vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff":
		// vim -c '!curl x', vim +'call system("curl x")'
		for i, a := range args {
			cmd := ""
			switch {
			case strings.HasPrefix(a.Value, "+"):
				cmd = a.Value
			case (a.Value == "-c" || a.Value == "--cmd") && i+1 < len(args):
				cmd = args[i+1].Value
			}
			if strings.Contains(cmd, "!") || strings.Contains(cmd, "system(") || strings.Contains(cmd, "term") {
				return base + " runs an editor command that runs shell commands: " + cmd
			}
		}

	case "sed", "gsed":
		scripts, _, _, sandbox, _ := sedArgs(args)
		if sandbox {
			return ""
		}
		for _, s := range scripts {
			if _, runs, ok := sedScript(s.Value); !s.Dynamic && ok && runs {
				return "sed script runs shell commands: " + s.Value
			}
		}
	case "awk", "gawk", "mawk", "nawk":
		ops, opts := operands(args, awkSpec)
		if has(opts, "--sandbox", "S") || len(ops) == 0 || ops[0].Dynamic {
			return ""
		}
		if p := ops[0].Value; awkSystem(p) || strings.Contains(strings.ReplaceAll(p, "||", ""), "|") {
			return "awk program may run shell commands: " + p
		}
	}
	return ""
}

// sedScript reads a sed script far enough to find the files it writes (w,
// W, s///w) and whether it runs commands (e, s///e). ok is false when the
// script is not understood.
func sedScript(s string) (writes []string, runs, ok bool) {
	i := 0
	toEOL := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := strings.TrimSpace(s[i : i+j])
		i += j
		return v
	}
	// delimited skips a delimited part, returning false if it is unterminated
	delimited := func(d byte) bool {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case d:
				i++
				return true
			case '\n':
				if d != '\n' {
					return false
				}
			}
		}
		return false
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!':
			i++
			continue
		case c == '#':
			toEOL()
			continue
		case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
			i++
			continue
		case c == '/':
			i++
			if !delimited('/') {
				return nil, false, false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			continue
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false, false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return nil, false, false
			}
			continue
		}
		i++
		switch c {
		case 's', 'y':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return nil, false, false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return nil, false, false
			}
			if c == 'y' {
				continue
			}
			for i < len(s) && strings.IndexByte("gipImMe0123456789w", s[i]) >= 0 {
				switch s[i] {
				case 'e':
					runs = true
				case 'w':
					i++
					writes = append(writes, toEOL())
					continue
				}
				i++
			}
		case 'w', 'W':
			writes = append(writes, toEOL())
		case 'e':
			runs = true
			toEOL()
		case 'a', 'i', 'c':
			// text to the end of the line; a trailing backslash continues it
			for t := toEOL(); strings.HasSuffix(t, "\\") && i < len(s); t = toEOL() {
				i++
			}
		case 'r', 'R', 'b', 't', 'T', ':':
			toEOL()
		case 'p', 'P', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', '=', 'z', 'F', 'l', 'L', 'q', 'Q':
		default:
			return nil, false, false
		}
	}
	return writes, runs, true
}

// interpreterCode is the code an interpreter's arguments give it as text
// (-c, -e, perl -ne, ...), or the here-document it reads when it has no
// script file.
func interpreterCode(args []Word, stdin *Word) []Word {
	var out []Word
	file := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case args[i].Dynamic:
			file = true
		case inlineCode[v] || len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[len(v)-1:], "ceE"):
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case v == "-m" || v == "--" || !strings.HasPrefix(v, "-"):
			file = true
		}
		if file {
			break
		}
	}
	if len(out) == 0 && !file && stdin != nil {
		out = append(out, *stdin)
	}
	return out
}

// spawns reports code that may start a process: the usual names of the
// calls that do, in the interpreters cordon knows.
func spawns(code string) bool {
	for _, s := range []string{"system", "subprocess", "popen", "spawn", "exec", "child_process", "`", "pty", "Popen",
		"Process", "Runtime", "shell_exec", "passthru", "proc_open", "Open3", "%x", "qx", "os.Command", "pcntl", "io.popen"} {
		if strings.Contains(code, s) {
			return true
		}
	}
	return false
}

// awkSystem reports a call of awk's system() in a program.
func awkSystem(p string) bool {
	for i := strings.Index(p, "system"); i >= 0; i = strings.Index(p, "system") {
		before := byte(' ')
		if i > 0 {
			before = p[i-1]
		}
		p = p[i+len("system"):]
		if !(before == '_' || before >= 'a' && before <= 'z' || before >= 'A' && before <= 'Z' || before >= '0' && before <= '9') &&
			strings.HasPrefix(strings.TrimLeft(p, " \t"), "(") {
			return true
		}
	}
	return false
}

var awkSpec = optSpec{flags: "bcCdghlLMNOpPrSstV", args: "FvfEiWo", long: " characters-as-bytes traditional copyright lint posix re-interval sandbox ", longArgs: " field-separator assign file include source exec load "}

func judgeAwk(j *judge) {
	ops, opts := operands(j.c.Args, awkSpec)
	if inc, ok := opt(opts, "i", "--include"); ok && inc.Value == "inplace" {
		for _, f := range ops[min(1, len(ops)):] {
			j.write(f, "edits", change)
		}
		j.floor("edits files in place")
	}
	if has(opts, "f", "--file", "E", "--exec", "--load") {
		j.need(WorkspaceWrite, "runs an awk program from a file")
		return
	}
	if has(opts, "--sandbox", "S") || len(ops) == 0 {
		return
	}
	prog := ops[0]
	if prog.Dynamic {
		j.need(WorkspaceWrite, "awk program known only at run time")
		return
	}
	p := prog.Value
	if strings.Contains(p, "system") || strings.Contains(p, "|") || strings.Contains(p, "getline") || awkPrintTo(p) {
		j.need(WorkspaceWrite, "awk program may write files or run commands")
	}
}

// awkPrintTo reports a print or printf redirected to a file.
func awkPrintTo(p string) bool {
	for _, kw := range []string{"print", "printf"} {
		rest := p
		for {
			i := strings.Index(rest, kw)
			if i < 0 {
				break
			}
			rest = rest[i+len(kw):]
			end := strings.IndexAny(rest, ";}\n")
			if end < 0 {
				end = len(rest)
			}
			if strings.Contains(rest[:end], ">") {
				return true
			}
		}
	}
	return false
}

func judgePerl(j *judge) {
	args := j.c.Args
	inPlace, code := false, false
	var ops []Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic || !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, args[i:]...)
			break
		}
		if v == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		for k := 1; k < len(v); k++ {
			switch v[k] {
			case 'i':
				inPlace = true
				k = len(v)
			case 'e', 'E':
				code = true
				if k == len(v)-1 && i+1 < len(args) {
					i++
					if args[i].Dynamic {
						j.need(DangerFullAccess, "runs code known only at run time")
					}
				}
				k = len(v)
			case 'I', 'M', 'm', 'x', 'C', 'd', 'D', 'l', '0':
				k = len(v)
			}
		}
	}
	if inPlace {
		files := ops
		if !code && len(files) > 0 {
			files = files[1:]
		}
		for _, f := range files {
			j.write(f, "edits", change)
		}
	}
	judgeInterpreter(j)
}

func judgeFind(j *judge) {
	args := j.c.Args
	i := 0
	for i < len(args) && !args[i].Dynamic && (args[i].Value == "-H" || args[i].Value == "-L" || args[i].Value == "-P" || strings.HasPrefix(args[i].Value, "-O") || args[i].Value == "-D") {
		if args[i].Value == "-D" {
			i++
		}
		i++
	}
	var starts []Word
	for ; i < len(args); i++ {
		v := args[i].Value
		if !args[i].Dynamic && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []Word{{Value: "."}}
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch a.Value {
		case "-delete":
			for _, s := range starts {
				w := s
				if !w.Dynamic {
					w = Word{Value: s.Value, Dynamic: true, Base: s.Value, Home: s.Home}
					if s.Home {
						w.Base = "~" + strings.TrimPrefix(s.Value, "~")
					}
				}
				j.delete(w, false, "deletes files under")
			}
			j.floor("deletes files")
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				j.write(args[i+1], "writes", data)
				i++
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			// the commands are judged on their own; skip to the terminator
			for i++; i < len(args) && args[i].Value != ";" && !(args[i].Value == "+" && args[i-1].Value == "{}"); i++ {
			}
		}
	}
}

// judgeOutputOpt judges a reader with an option naming an output file.
func judgeOutputOpt(short, long string) func(j *judge) {
	return func(j *judge) {
		for i, a := range j.c.Args {
			switch {
			case short != "" && a.Value == "-"+short || a.Value == long:
				if i+1 < len(j.c.Args) {
					j.write(j.c.Args[i+1], "writes", data)
				}
			case strings.HasPrefix(a.Value, long+"="):
				j.write(Word{Value: strings.TrimPrefix(a.Value, long+"="), Dynamic: a.Dynamic}, "writes", data)
			case short != "" && strings.HasPrefix(a.Value, "-"+short) && len(a.Value) > 2 && !strings.HasPrefix(a.Value, "--"):
				j.write(Word{Value: a.Value[2:], Dynamic: a.Dynamic}, "writes", data)
			}
		}
	}
}

var sortSpec = optSpec{
	flags:    "bcCdfghiMmnRrsuVz",
	args:     "koStT",
	long:     " ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse version-sort merge stable unique zero-terminated debug help version ",
	longArgs: " key output field-separator buffer-size temporary-directory sort random-source compress-program files0-from batch-size parallel check ",
}

// judgeSort: sort -o FILE writes it, however it is spelled (sort -ro f,
// sort --out=f); --compress-program runs a program.
func judgeSort(j *judge) {
	_, opts := operands(j.c.Args, sortSpec)
	if w, ok := opt(opts, "o", "--output"); ok {
		j.write(w, "writes", data)
	}
	if w, ok := opts["--compress-program"]; ok {
		j.needf(DangerFullAccess, "sort --compress-program: runs %s", w.Value)
	}
}

// judgeHistory: history -w and -a write the history to a file, $HISTFILE
// without one (known only at run time: the environment may set it).
func judgeHistory(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "acnrwps", args: "d"})
	if !has(opts, "w", "a") {
		return
	}
	if len(ops) == 0 {
		j.write(Word{Value: "$HISTFILE", Dynamic: true}, "writes the history to", data)
		return
	}
	j.write(ops[0], "writes the history to", data)
}

// judgeLess: less -o and -O (--log-file, --LOG-FILE) copy the input to a
// file.
func judgeLess(j *judge) {
	_, opts := operands(j.c.Args, optSpec{flags: "?aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~", args: "bhjkoOpPtTxyzD#", longArgs: " log-file LOG-FILE tag tag-file pattern prompt shift tabs window lesskey-file ", long: " help version quit-at-eof QUIT-AT-EOF quit-if-one-screen no-init RAW-CONTROL-CHARS raw-control-chars chop-long-lines ignore-case IGNORE-CASE line-numbers LINE-NUMBERS mouse squeeze-blank-lines "})
	for _, k := range []string{"o", "O", "--log-file", "--LOG-FILE"} {
		if w, ok := opts[k]; ok {
			j.write(w, "logs to", data)
		}
	}
}

func judgeTree(j *judge) { judgeOutputOpt("o", "-o")(j) }

func judgeUniq(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "cdDiuz", args: "fsw", long: " count repeated ignore-case unique zero-terminated group all-repeated ", longArgs: " skip-fields skip-chars check-chars "})
	if len(ops) >= 2 {
		j.write(ops[1], "writes", data)
	}
}

func judgeXxd(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "aEeiruCdpbhv", args: "cgloOsnR"})
	if len(ops) >= 2 {
		j.write(ops[1], "writes", data)
	}
}

func judgeYq(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "iPjMCNreSv", args: "opI", long: " inplace prettyPrint null-input exit-status no-colors colors unwrapScalar ", longArgs: " output-format input-format indent expression front-matter "})
	if has(opts, "i", "--inplace") {
		for _, f := range ops[min(1, len(ops)):] {
			j.write(f, "edits", change)
		}
		j.floor("edits files in place")
	}
}

func judgeRg(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "--pre" || strings.HasPrefix(a.Value, "--pre=") {
			j.need(WorkspaceWrite, "runs a preprocessor command")
		}
	}
}

func judgeTar(j *judge) {
	args := j.c.Args
	mode := byte(0)
	var archive, dir *Word
	absolute, toStdout := false, false
	argOpts := "fCbgKNTXVIHL"
	take := func(ch byte, w Word) {
		switch ch {
		case 'f':
			archive = &w
		case 'C':
			dir = &w
		}
	}
	i := 0
	// traditional form: tar xzf ARCHIVE
	if len(args) > 0 && !args[0].Dynamic && !strings.HasPrefix(args[0].Value, "-") {
		cluster := args[0].Value
		i = 1
		for k := 0; k < len(cluster); k++ {
			ch := cluster[k]
			if strings.IndexByte("cxtrudA", ch) >= 0 {
				mode = ch
			}
			if ch == 'O' {
				toStdout = true
			}
			if ch == 'P' {
				absolute = true
			}
			if strings.IndexByte(argOpts, ch) >= 0 && i < len(args) {
				take(ch, args[i])
				i++
			}
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic || !strings.HasPrefix(v, "-") {
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v[2:], "=")
			switch name {
			case "create":
				mode = 'c'
			case "extract", "get":
				mode = 'x'
			case "list":
				mode = 't'
			case "append":
				mode = 'r'
			case "update":
				mode = 'u'
			case "diff", "compare":
				mode = 'd'
			case "delete":
				mode = 'D'
			case "absolute-names":
				absolute = true
			case "to-stdout":
				toStdout = true
			case "file", "directory":
				w := Word{Value: val, Dynamic: a.Dynamic}
				if !eq && i+1 < len(args) {
					i++
					w = args[i]
				}
				take(map[string]byte{"file": 'f', "directory": 'C'}[name], w)
			}
			continue
		}
		for k := 1; k < len(v); k++ {
			ch := v[k]
			if strings.IndexByte("cxtrudA", ch) >= 0 {
				mode = ch
			}
			if ch == 'O' {
				toStdout = true
			}
			if ch == 'P' {
				absolute = true
			}
			if strings.IndexByte(argOpts, ch) >= 0 {
				if k+1 < len(v) {
					take(ch, Word{Value: v[k+1:]})
				} else if i+1 < len(args) {
					i++
					take(ch, args[i])
				}
				break
			}
		}
	}
	switch mode {
	case 'c', 'r', 'u', 'A', 'D':
		if archive != nil && archive.Value != "-" {
			j.write(*archive, "writes", data)
		}
		j.floor("writes an archive")
	case 'x':
		if toStdout {
			return
		}
		if absolute {
			j.need(DangerFullAccess, "extracts absolute paths")
		}
		target := Word{Value: "."}
		if dir != nil {
			target = *dir
		}
		j.write(target, "extracts into", change)
		j.floor("extracts files")
	case 't', 'd':
	default:
		j.need(WorkspaceWrite, "tar in an unknown mode")
	}
}

func judgeUnzip(j *judge) {
	var dir *Word
	for i, a := range j.c.Args {
		switch {
		case a.Value == "-l" || a.Value == "-v" || a.Value == "-t" || a.Value == "-Z" || a.Value == "-z" || a.Value == "-p" || a.Value == "-c" || a.Value == "-lv":
			return
		case a.Value == "-d" && i+1 < len(j.c.Args):
			w := j.c.Args[i+1]
			dir = &w
		case strings.HasPrefix(a.Value, "-d") && len(a.Value) > 2:
			dir = &Word{Value: a.Value[2:], Dynamic: a.Dynamic}
		}
	}
	target := Word{Value: "."}
	if dir != nil {
		target = *dir
	}
	j.write(target, "extracts into", change)
	j.floor("extracts files")
}

func judgeZip(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "rRjJmTuvqyXDdfFgkloz0123456789AeS", args: "nbtxiIP"})
	if len(ops) > 0 {
		j.write(ops[0], "writes", data)
	}
	j.floor("writes an archive")
}

func judgeCompress(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "cdfhklLnNqrtvV0123456789zZTe", args: "STo", long: " stdout to-stdout decompress uncompress force keep list no-name name quiet recursive test verbose best fast rm ", longArgs: " suffix threads "})
	if has(opts, "c", "--stdout", "--to-stdout", "l", "--list", "t", "--test") {
		return
	}
	if out, ok := opt(opts, "o"); ok && j.c.Base() == "zstd" {
		j.write(out, "writes", data)
	}
	for _, w := range ops {
		j.write(w, "replaces", change)
	}
	j.floor("compresses or decompresses files")
}

var curlSpec = optSpec{
	flags:    "0123456aBfgGIijJkLlMnNOpqRsSvVZ#",
	args:     "AbcCdDeEFHKmoPQrtTuUwxXyYz",
	long:     " remote-name remote-name-all location silent show-error fail verbose insecure compressed head include progress-bar http1.1 http2 ipv4 ipv6 no-progress-meter create-dirs remote-header-name fail-with-body globoff get list-only no-buffer no-keepalive path-as-is proxytunnel raw ssl-reqd tcp-nodelay no-sessionid disable ",
	longArgs: " data data-raw data-binary data-urlencode data-ascii header request user-agent user referer cookie cookie-jar output output-dir dump-header config max-time connect-timeout form form-string upload-file proxy write-out cert key cacert capath retry retry-delay retry-max-time range url trace trace-ascii libcurl stderr resolve connect-to interface limit-rate max-filesize oauth2-bearer etag-save etag-compare json aws-sigv4 proxy-user proto proto-redir time-cond netrc-file unix-socket abstract-unix-socket hsts alt-svc ",
}

func judgeCurl(j *judge) {
	_, opts := operands(j.c.Args, curlSpec)
	for _, k := range []string{"o", "--output", "D", "--dump-header", "c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl", "--stderr", "--etag-save", "--hsts", "--alt-svc"} {
		if w, ok := opts[k]; ok && w.Value != "-" {
			j.write(w, "writes", data)
		}
	}
	if has(opts, "O", "--remote-name", "--remote-name-all", "J", "--remote-header-name") {
		dir := Word{Value: "."}
		if w, ok := opts["--output-dir"]; ok {
			dir = w
		}
		j.write(dir, "downloads into", change)
	}
	j.need(WorkspaceWrite, "network access")
}

func judgeWget(j *judge) {
	_, opts := operands(j.c.Args, optSpec{flags: "qvdcNrkKpmhSbxEFnV46", args: "OoaPlTtUeiQAR", long: " quiet verbose debug continue timestamping recursive convert-links mirror page-requisites spider no-check-certificate no-verbose server-response background no-clobber ", longArgs: " output-document output-file append-output directory-prefix level timeout tries user-agent header user password input-file post-data post-file execute limit-rate accept reject "})
	if w, ok := opt(opts, "O", "--output-document"); ok {
		if w.Value != "-" {
			j.write(w, "writes", data)
		}
	} else if !has(opts, "--spider") {
		dir := Word{Value: "."}
		if w, ok := opt(opts, "P", "--directory-prefix"); ok {
			dir = w
		}
		j.write(dir, "downloads into", change)
	}
	for _, k := range []string{"o", "--output-file", "a", "--append-output"} {
		if w, ok := opts[k]; ok {
			j.write(w, "writes", data)
		}
	}
	j.need(WorkspaceWrite, "network access")
}

func judgeKill(j *judge) {
	args := j.c.Args
	i := 0
	if i < len(args) && (args[i].Value == "-l" || args[i].Value == "-L") {
		return
	}
	switch {
	case i < len(args) && (args[i].Value == "-s" || args[i].Value == "-n"):
		i += 2
	case i < len(args) && args[i].Value == "--":
		i++
	case i < len(args) && strings.HasPrefix(args[i].Value, "-"):
		i++
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a.Value == "--" {
			continue
		}
		if a.Dynamic {
			j.need(WorkspaceWrite, "signals a process known only at run time")
			continue
		}
		if a.Value == "-1" {
			j.need(DangerFullAccess, "signals every process")
		}
	}
	j.floor("signals processes")
}

func judgeDate(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "-s" || strings.HasPrefix(a.Value, "--set") || strings.HasPrefix(a.Value, "-s") && !strings.HasPrefix(a.Value, "--") {
			j.need(DangerFullAccess, "sets the system clock")
		}
	}
}

func judgeHostname(j *judge) {
	for _, a := range j.c.Args {
		if a.Dynamic || !strings.HasPrefix(a.Value, "-") || a.Value == "-F" || a.Value == "--file" || strings.HasPrefix(a.Value, "-b") {
			j.need(DangerFullAccess, "sets the host name")
			return
		}
	}
}

func judgeDmesg(j *judge) {
	for _, a := range j.c.Args {
		switch {
		case a.Value == "-c" || a.Value == "-C" || a.Value == "--clear" || a.Value == "--read-clear" || a.Value == "-D" || a.Value == "-E" || a.Value == "-n" || strings.HasPrefix(a.Value, "--console"):
			j.need(DangerFullAccess, "changes the kernel log")
		}
	}
}

func judgeJournalctl(j *judge) {
	for _, a := range j.c.Args {
		if strings.HasPrefix(a.Value, "--vacuum") || a.Value == "--rotate" || a.Value == "--flush" || a.Value == "--relinquish-var" || a.Value == "--setup-keys" || a.Value == "--sync" {
			j.need(DangerFullAccess, "changes the system journal")
		}
	}
}

func judgeSysctl(j *judge) {
	for _, a := range j.c.Args {
		v := a.Value
		if a.Dynamic || strings.Contains(v, "=") || v == "-w" || v == "--write" || v == "-p" || strings.HasPrefix(v, "--load") || v == "--system" {
			j.need(DangerFullAccess, "changes kernel parameters")
			return
		}
	}
}

// changing reports whether args contain a word that makes a network or
// device tool change something.
func changing(args []Word, words ...string) bool {
	for _, a := range args {
		if a.Dynamic {
			return true
		}
		for _, w := range words {
			if a.Value == w {
				return true
			}
		}
	}
	return false
}

func judgeIP(j *judge) {
	if changing(j.c.Args, "add", "del", "delete", "set", "flush", "change", "replace", "append", "exec", "prepend", "up", "down", "attach", "detach", "save", "restore", "monitor", "-batch", "-b", "-force") {
		j.need(DangerFullAccess, "changes network configuration")
	}
}

func judgeIfconfig(j *judge) {
	ops, _ := operands(j.c.Args, optSpec{flags: "asvl"})
	if len(ops) > 1 {
		j.need(DangerFullAccess, "changes network configuration")
	}
}

func judgeRoute(j *judge) {
	if changing(j.c.Args, "add", "del", "delete", "change", "flush") {
		j.need(DangerFullAccess, "changes network routes")
	}
}

func judgeMount(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "lhVv", args: "t"})
	if len(ops) > 0 || has(opts, "?") || len(opts) > 0 && !has(opts, "l", "h", "V", "v", "t") {
		j.need(DangerFullAccess, "mounts file systems")
	}
	for k := range opts {
		if strings.HasPrefix(k, "?") {
			j.need(DangerFullAccess, "mounts file systems")
		}
	}
}

func judgeSwapon(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "--show" || a.Value == "-s" || a.Value == "--summary" {
			return
		}
	}
	j.need(DangerFullAccess, "enables swap")
}

func judgeFdisk(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "-l" || a.Value == "--list" || a.Value == "-s" && j.c.Base() == "fdisk" {
			return
		}
	}
	j.need(DangerFullAccess, "changes disk partitions")
}

func judgeCrontab(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "-l" {
			return
		}
	}
	j.need(DangerFullAccess, "changes scheduled jobs")
}

// sub returns the first operand of args, skipping options (and the
// arguments of those in withArg).
func sub(args []Word, withArg ...string) (string, []Word) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			return "\x00", args[i+1:]
		}
		if strings.HasPrefix(a.Value, "-") {
			for _, o := range withArg {
				if a.Value == o {
					i++
				}
			}
			continue
		}
		return a.Value, args[i+1:]
	}
	return "", nil
}

func judgeSystemctl(j *judge) {
	s, _ := sub(j.c.Args, "-t", "--type", "-p", "--property", "-H", "--host", "-M", "--machine", "--state", "-n", "--lines", "-o", "--output")
	switch s {
	case "", "status", "show", "cat", "list-units", "list-unit-files", "list-sockets", "list-timers", "list-jobs",
		"list-dependencies", "list-machines", "list-automounts", "list-paths", "is-active", "is-enabled", "is-failed",
		"is-system-running", "get-default", "help", "show-environment":
		return
	}
	j.need(DangerFullAccess, "changes system services")
}

func judgeService(j *judge) {
	args := j.c.Args
	if len(args) == 1 && args[0].Value == "--status-all" || len(args) == 2 && args[1].Value == "status" {
		return
	}
	j.need(DangerFullAccess, "changes system services")
}

func judgeLaunchctl(j *judge) {
	switch s, _ := sub(j.c.Args); s {
	case "list", "print", "print-disabled", "print-cache", "blame", "version", "help", "dumpstate", "managerpid", "manageruid", "managername":
		return
	}
	j.need(DangerFullAccess, "changes system services")
}

func judgeIptables(j *judge) {
	for _, a := range j.c.Args {
		v := a.Value
		if v == "--list" || v == "--list-rules" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "LS") {
			return
		}
	}
	j.need(DangerFullAccess, "changes the firewall")
}

func judgeNft(j *judge) {
	if s, _ := sub(j.c.Args, "-f", "--file", "-I", "--includepath"); s == "list" || s == "describe" {
		return
	}
	j.need(DangerFullAccess, "changes the firewall")
}

func judgeUfw(j *judge) {
	if s, _ := sub(j.c.Args); s == "status" || s == "show" || s == "version" || s == "app" {
		return
	}
	j.need(DangerFullAccess, "changes the firewall")
}

func judgeFirewallCmd(j *judge) {
	for _, a := range j.c.Args {
		v := a.Value
		if !(strings.HasPrefix(v, "--list") || strings.HasPrefix(v, "--get") || strings.HasPrefix(v, "--query") || v == "--state" || strings.HasPrefix(v, "--zone") || v == "--permanent") {
			j.need(DangerFullAccess, "changes the firewall")
			return
		}
	}
}

func judgeAlias(j *judge) {
	for _, a := range j.c.Args {
		if strings.Contains(a.Value, "=") || a.Dynamic {
			j.need(DangerFullAccess, "defines an alias: later command names may run something else")
			return
		}
	}
}

func judgeHash(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "-p" || a.Dynamic {
			j.need(DangerFullAccess, "hash -p: makes a command name run another program")
			return
		}
	}
}

func judgeEnable(j *judge) {
	for _, a := range j.c.Args {
		if strings.HasPrefix(a.Value, "-") && strings.ContainsAny(a.Value, "fd") || a.Dynamic {
			j.need(DangerFullAccess, "loads or removes shell builtins")
			return
		}
		if !strings.HasPrefix(a.Value, "-") {
			j.need(WorkspaceWrite, "enables or disables shell builtins")
		}
	}
}

// judgeExport: the variables are judged with the assignments; exporting
// functions makes them shadow commands in child shells.
func judgeExport(j *judge) {
	for _, a := range j.c.Args {
		if strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "f") && !strings.Contains(a.Value, "=") {
			j.need(DangerFullAccess, "exports functions that child shells run instead of commands")
			return
		}
	}
}

// riskyVar says why setting a variable changes what commands run, or "".
func riskyVar(name string, v Word) string {
	switch {
	case name == "LD_PRELOAD":
		return "loads a library into every program"
	case strings.HasPrefix(name, "LD_"), strings.HasPrefix(name, "DYLD_"):
		return "changes which libraries programs load"
	case strings.HasPrefix(name, "BASH_FUNC_"):
		return "defines a function child shells run instead of a command"
	case strings.HasPrefix(name, "GIT_CONFIG"):
		return "sets git configuration, which can make git run commands"
	case strings.EqualFold(name, "npm_config_script_shell"), strings.EqualFold(name, "npm_config_node_options"):
		return "makes npm run its scripts through another program or with extra code"
	case name == "GOFLAGS" && (v.Dynamic || strings.Contains(v.Value, "exec")):
		return "makes go run another program (-exec, -toolexec)"
	}
	switch name {
	case "PATH":
		return "changes which program a command name runs"
	case "BASH_ENV", "ENV":
		return "makes every shell run a file first"
	case "PROMPT_COMMAND", "PS0", "PS4":
		return "makes the shell run commands"
	case "SHELLOPTS", "BASHOPTS":
		return "changes the options of child shells"
	case "GCONV_PATH", "HOSTALIASES", "RESOLV_HOST_CONF", "GLIBC_TUNABLES", "MALLOC_CHECK_":
		return "changes how the C library behaves"
	case "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF",
		"GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"SUDO_ASKPASS", "GPG_TTY_PROGRAM", "BROWSER":
		return "makes programs run another command"
	case "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"PYTHONSTARTUP", "PYTHONINSPECT", "PERL5DB", "LUA_INIT", "RUSTC_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC_WRAPPER":
		return "makes an interpreter or compiler run extra code"
	case "EDITOR", "VISUAL", "PAGER", "GIT_PAGER", "GIT_EDITOR", "MANPAGER", "SYSTEMD_PAGER", "LESSOPEN",
		"LESSCLOSE", "SYSTEMD_EDITOR", "SUDO_EDITOR", "GIT_SEQUENCE_EDITOR":
		if safePager(v) {
			return ""
		}
		return "makes programs run " + v.Value
	}
	return ""
}

// safePager reports a pager or editor value that runs nothing else.
func safePager(v Word) bool {
	if v.Dynamic || strings.ContainsAny(v.Value, ";|&$`()<>\n'\"\\") {
		return false
	}
	f := strings.Fields(v.Value)
	if len(f) == 0 {
		return true
	}
	switch f[0] {
	case "cat", "less", "more", "most", "head", "tail", "true", ":", "delta", "bat":
		return true
	}
	return false
}

// judgeShell judges a shell that runs a script file or its input; bash -c
// and here-documents were unwrapped by Parse.
func judgeShell(j *judge) {
	script, ok := j.scriptOperand(false)
	switch {
	case !ok:
		j.need(WorkspaceWrite, "starts a shell")
	case script == nil:
		j.stdinScript("shell")
	case script.Dynamic:
		j.needf(DangerFullAccess, "runs a script produced at run time: %s", script.Value)
	default:
		j.needf(WorkspaceWrite, "runs the script %s", script.Value)
	}
}

// scriptOperand finds the script an interpreter runs: nil when it reads
// its input; ok false for inline code or no script at all.
func (j *judge) scriptOperand(interpreter bool) (script *Word, ok bool) {
	args := j.c.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case a.Dynamic && !strings.HasPrefix(v, "-"):
			return &args[i], true
		case v == "-" || v == "-s":
			return nil, true
		case v == "--":
			if i+1 < len(args) {
				return &args[i+1], true
			}
			return nil, true
		case interpreter && inlineCode[v]:
			if i+1 < len(args) && args[i+1].Dynamic {
				return &args[i+1], true
			}
			return nil, false
		case interpreter && v == "-m":
			return nil, false
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file" || v == "-W" || v == "-X" || v == "-I" && interpreter {
				i++
			}
		default:
			return &args[i], true
		}
	}
	return nil, true
}

// stdinScript judges an interpreter that reads its program from its input.
func (j *judge) stdinScript(what string) {
	c := j.c
	for _, r := range c.Redirects {
		if r.Op == "<" && (r.Fd == "" || r.Fd == "0") {
			if r.Target.Dynamic {
				j.needf(DangerFullAccess, "runs a %s script produced at run time", what)
			} else {
				j.needf(WorkspaceWrite, "runs the %s script %s", what, r.Target.Value)
			}
			return
		}
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			j.needf(WorkspaceWrite, "runs a %s script from a here-document", what)
			return
		}
	}
	if !c.Piped {
		j.needf(WorkspaceWrite, "starts an interactive %s", what)
	}
}

// pipedScript: a shell or interpreter reading its program from a pipe runs
// code nobody has seen.
func (j *judge) pipedScript() {
	c := j.c
	if !c.Piped {
		return
	}
	base := c.Base()
	isShell := false
	for _, s := range shells {
		isShell = isShell || base == s
	}
	if !isShell && !interpreters[base] {
		return
	}
	script, ok := j.scriptOperand(!isShell)
	if !ok || script != nil {
		return
	}
	for _, r := range c.Redirects {
		if r.Op == "<" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			return
		}
	}
	what := "an interpreter"
	if isShell {
		what = "a shell"
	}
	var from []string
	download := false
	for _, u := range c.Upstream {
		from = append(from, u)
		download = download || downloaders[u]
	}
	cmd := j.text()
	if len(from) > 0 {
		cmd = strings.Join(from, " | ") + " | " + j.text()
	}
	f := Finding{Command: abbrev(cmd), Level: DangerFullAccess, Reason: "runs a script read from a pipe in " + what}
	if download {
		f.Reason = "pipes a download into " + what
	}
	j.level = DangerFullAccess
	j.findings = append(j.findings, f)
}

func judgeInterpreter(j *judge) {
	args := j.c.Args
	if len(args) == 1 && !args[0].Dynamic {
		switch args[0].Value {
		case "--version", "-V", "-v", "--help", "-h", "version", "-version":
			return
		}
	}
	base := j.c.Base()
	for i, a := range args {
		if a.Value == "-m" && i+1 < len(args) && strings.HasPrefix(base, "python") {
			mod := args[i+1].Value
			switch mod {
			case "pip":
				judgePipArgs(j, args[i+2:])
				return
			case "venv", "virtualenv":
				ops, _ := operands(args[i+2:], optSpec{flags: "h", long: " system-site-packages symlinks copies clear upgrade without-pip upgrade-deps ", longArgs: " prompt "})
				for _, w := range ops {
					j.write(w, "creates a virtual environment in", change)
				}
				j.need(WorkspaceWrite, "creates a virtual environment")
				return
			case "json.tool", "this", "site", "platform", "sysconfig", "tokenize", "pydoc", "timeit":
				return
			}
			j.needf(WorkspaceWrite, "runs the module %s", mod)
			return
		}
		if a.Value == "-m" {
			break
		}
	}
	if base == "bun" || base == "deno" {
		if s, _ := sub(args); s != "" && s != "run" && !strings.Contains(s, ".") {
			j.needf(WorkspaceWrite, "%s %s", base, s)
			return
		}
	}
	script, ok := j.scriptOperand(true)
	switch {
	case !ok:
		j.need(WorkspaceWrite, "runs inline code")
	case script == nil:
		j.stdinScript(base)
	case script.Dynamic:
		j.needf(DangerFullAccess, "runs code produced at run time: %s", script.Value)
	default:
		j.needf(WorkspaceWrite, "runs the program %s", script.Value)
	}
}

func judgeSource(j *judge) {
	if len(j.c.Args) == 0 {
		return
	}
	if f := j.c.Args[0]; f.Dynamic {
		j.needf(DangerFullAccess, "runs a script produced at run time: %s", f.Value)
		return
	}
	j.needf(WorkspaceWrite, "runs the script %s in this shell", j.c.Args[0].Value)
}

func judgeSshKeygen(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "lyBFHLqRvcDepP", args: "fbCNtZIn"})
	_ = ops
	if has(opts, "l", "y", "B", "F", "L", "D") {
		return
	}
	if f, ok := opts["f"]; ok {
		j.write(f, "writes a key to", change)
		j.need(WorkspaceWrite, "creates a key")
		return
	}
	j.need(DangerFullAccess, "writes SSH keys in the home directory")
}
