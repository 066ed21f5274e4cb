package darwin

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// SandboxExec is the only sandbox-exec cordon runs: one found on PATH could
// be anyone's.
const SandboxExec = "/usr/bin/sandbox-exec"

// sandbox-exec's own exit statuses (sysexits.h), returned instead of the
// command's when it fails before the command runs: it prints
// "sandbox-exec: ..." first. A command may exit with these too.
const (
	// ExitProfileRefused: the profile did not compile (EX_DATAERR).
	ExitProfileRefused = 65
	// ExitExecFailed: execvp of the command failed (EX_OSERR), e.g.
	// "sandbox-exec: execvp() of 'x' failed: Operation not permitted".
	ExitExecFailed = 71
)

// Exit statuses of a command that could not be executed, as a shell gives
// them (and cordon on Linux).
const (
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// inlineBudget bounds the bytes of argv and environment with which the
// profile is given inline (-p) rather than in a file (-f): the profile
// travels in sandbox-exec's argv, and argv and environment together must
// fit ARG_MAX (1 MiB on current macOS, 256 KiB on older releases). A
// profile with thousands of paths is past it; a typical one is 10-40 KiB.
const inlineBudget = 192 << 10

// Inline reports whether a profile can be given to sandbox-exec on its
// command line along with argv and env, within a safe share of ARG_MAX.
// The kernel counts each string with its NUL and its pointer.
func Inline(profile string, argv, env []string) bool {
	n := len(SandboxExec) + len(profile) + 3*(1+8) + 16 // sandbox-exec, "-p", "--"
	for _, list := range [][]string{argv, env} {
		for _, s := range list {
			n += len(s) + 1 + 8
		}
	}
	return n <= inlineBudget
}

// Args returns sandbox-exec's arguments (without argv[0]) to run argv
// under a profile: the profile itself with -p, or, when profileFile is
// set, the file it was written to with -f. "--" ends sandbox-exec's
// options, so a command whose name starts with "-" is not taken for one.
func Args(profile, profileFile string, argv []string) []string {
	args := []string{"-p", profile}
	if profileFile != "" {
		args = []string{"-f", profileFile}
	}
	return append(append(args, "--"), argv...)
}

// LookCommand finds the program execvp(3) would run for name, with the
// PATH of env, relative to dir, on the file system stat reads (absolute
// paths; os.Stat on the host). It says beforehand what sandbox-exec
// would only report as its own failure (status 71): ErrNotFound (status
// 127) when there is no such program, ErrNotExecutable (126) when the
// name is a directory or not executable. A name with a slash is taken as
// a path; an empty PATH entry is the working directory, and a missing
// PATH is execvp's default "/usr/bin:/bin".
func LookCommand(name string, env []string, dir string, stat func(string) (fs.FileInfo, error)) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	abs := func(p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		return path.Join(dir, p)
	}
	if strings.Contains(name, "/") {
		p := abs(name)
		fi, err := stat(p)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s: %w", name, ErrNotFound)
		case !executable(fi):
			return "", fmt.Errorf("%s: %w", name, ErrNotExecutable)
		}
		return p, nil
	}
	pathList, ok := lookupEnv(env, "PATH")
	if !ok {
		pathList = "/usr/bin:/bin"
	}
	// execvp tries every entry; a candidate that exists but cannot be
	// executed is reported only when nothing later can.
	denied := ""
	for _, d := range strings.Split(pathList, ":") {
		if d == "" {
			d = "."
		}
		p := abs(path.Join(d, name))
		fi, err := stat(p)
		if err != nil {
			continue
		}
		if !executable(fi) {
			if denied == "" {
				denied = p
			}
			continue
		}
		return p, nil
	}
	if denied != "" {
		return "", fmt.Errorf("%s: %w", denied, ErrNotExecutable)
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotFound)
}

// executable reports whether fi is a file someone may execute. Whether
// the caller may is the kernel's to say; the sandbox runs as the caller.
func executable(fi fs.FileInfo) bool {
	return !fi.IsDir() && fi.Mode()&0o111 != 0
}

// LookStatus is the exit status for an error of LookCommand.
func LookStatus(err error) int {
	if errors.Is(err, ErrNotExecutable) {
		return ExitNotExecutable
	}
	return ExitNotFound
}

// lookupEnv returns the value of the last name=value in env.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Command returns the program and its argv (with argv[0]) that run argv
// under the profile: sandbox-exec itself, or, with rlimits to set, cordon's
// binary at self re-executed to set them and then execute sandbox-exec
// (see LimitChild).
func Command(self string, rl []Rlimit, profile, profileFile string, argv []string) (string, []string) {
	args := Args(profile, profileFile, argv)
	if len(rl) == 0 {
		return SandboxExec, append([]string{SandboxExec}, args...)
	}
	return self, LimitArgs(self, rl, args)
}
