package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
)

// exitHookBlocked is what Claude Code reads as "block this tool call and
// show stderr to the model".
const exitHookBlocked = 2

// stdin is where cordon hook reads the agent's JSON.
var stdin io.Reader = os.Stdin

// hookInputLimit bounds the hook's stdin: a Write's content is at most
// policy.MaxFileSize, JSON escapes can make it six times longer.
const hookInputLimit = 8 * policy.MaxFileSize

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "answer an agent's hook (cordon hook claude)",
		Commands: []*cli.Command{{
			Name:  "claude",
			Usage: "Claude Code's PreToolUse hook: decide the tool call, and run Bash commands under cordon",
			Description: "Reads Claude Code's PreToolUse (or PermissionRequest) hook JSON on stdin and prints its answer " +
				"(hookSpecificOutput: permissionDecision, permissionDecisionReason, and for a Bash command " +
				"that runs sandboxed an updatedInput whose command runs the original under cordon run). " +
				"A tool cordon does not judge that none of its rules decides gets no answer. To a PermissionRequest " +
				"the answer is a decision, allow or deny, or none when cordon would ask too. Exit status: 0 with an " +
				"answer (or none); 2 with the reason on stderr when the input or the settings cannot be read (Claude " +
				"Code then blocks the call; a PermissionRequest is also answered deny). See docs/claude-code.md.",
			Flags: policyFlags(),
			// Claude Code lets a call through when its hook fails with any
			// status but 2: a hook misconfigured must block, not open.
			OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
				data, _ := io.ReadAll(io.LimitReader(stdin, hookInputLimit))
				return hookFailed(stdout, stderr, data, err)
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				var data []byte
				he := hookEnv{getenv: os.Getenv, stdout: stdout, load: policy.Load}
				if err := claudeHook(ctx, cmd, stdin, &data, he); err != nil {
					return hookFailed(stdout, stderr, data, err)
				}
				return nil
			},
		}},
	}
}

// hookFailed says why cordon cannot answer a hook call, on errOut, and
// blocks it: exit 2, and for a PermissionRequest, which Claude Code leaves
// as it was after a hook that exits 2, a deny decision on out besides.
func hookFailed(out, errOut io.Writer, input []byte, err error) error {
	fmt.Fprintf(errOut, "cordon hook: %v\n", err)
	var ev struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(input, &ev) == nil && ev.HookEventName == policy.EventPermissionRequest {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(policy.DenyPermissionRequest("cordon hook: " + err.Error()))
	}
	return exitStatus(exitHookBlocked)
}

// hookEnv is where cordon hook claude answers: in its own process, or in
// cordon serve for a client (serveHook), with the client's environment
// and working directory.
type hookEnv struct {
	getenv func(string) string
	// cwd is the working directory, for a call whose input names none;
	// "" for the process's own.
	cwd string
	// self is the path of cordon's binary, which the rewritten commands
	// run; "" for the process's own.
	self   string
	stdout io.Writer
	load   func(policy.LoadOptions) (*policy.Policy, error)
	// served refuses (errNotServed) a policy that turns cordon serve
	// off, and one that runs a program of the user's to decide
	// (hooks.preDecision), which runs with the hook's own environment.
	served bool
}

// errNotServed: cordon serve leaves this hook call to the client.
var errNotServed = errors.New("not answered by cordon serve")

// claudeHook answers one PreToolUse (or PermissionRequest) call, and
// leaves what it read in *input. Every tool call of the agent pays for it:
// no probe, no runtime, nothing but the settings and the classifier.
func claudeHook(ctx context.Context, cmd *cli.Command, r io.Reader, input *[]byte, he hookEnv) error {
	data, err := io.ReadAll(io.LimitReader(r, hookInputLimit+1))
	*input = data
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > hookInputLimit {
		return fmt.Errorf("%w: more than %d bytes", policy.ErrHookInput, hookInputLimit)
	}
	in, err := policy.ParseClaudeHook(data)
	if err != nil {
		return err
	}
	cwd := in.Cwd
	if cwd == "" {
		if cwd = he.cwd; cwd == "" {
			if cwd, err = os.Getwd(); err != nil {
				return fmt.Errorf("working directory: %w", err)
			}
		}
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") {
			return p
		}
		return filepath.Join(cwd, p)
	}
	workspace := cwd
	if w := cmd.String("workspace"); w != "" {
		workspace = abs(w)
	} else if w := he.getenv("CLAUDE_PROJECT_DIR"); filepath.IsAbs(w) {
		workspace = w
	}
	home, err := homeDir(he.getenv)
	if err != nil {
		return err
	}
	// The flags that shape the policy go to cordon run too, absolute: the
	// decision and the sandbox must read the same settings.
	runFlags := []string{"--workspace", filepath.Clean(workspace)}
	paths := map[string]bool{"settings": true, "allow-write": true, "allow-read": true, "deny-read": true, "deny-write": true}
	lists := map[string][]string{}
	for _, name := range []string{"settings", "allow-write", "allow-read", "deny-read", "deny-write", "allow-domain", "deny-domain"} {
		for _, v := range cmd.StringSlice(name) {
			if paths[name] {
				v = abs(v)
			}
			lists[name] = append(lists[name], v)
			runFlags = append(runFlags, "--"+name, v)
		}
	}
	// Warnings of cordon run are said once per session: the model reads
	// every tool result.
	if in.SessionID != "" {
		runFlags = append(runFlags, "--session", in.SessionID)
	}
	// An agent runs its commands one after another by the hundred: they
	// go through cordon serve unless the settings say otherwise
	// (docs/performance.md, "cordon serve for Claude Code").
	runFlags = append(runFlags, "--serve")
	scalars := map[string]string{}
	for _, name := range []string{"memory", "pids", "cpus", "timeout", "output-limit", "file-size", "open-files", "tmp-size"} {
		if v := cmd.String(name); v != "" {
			scalars[name] = v
			runFlags = append(runFlags, "--"+name, v)
		}
	}
	pol, err := he.load(policy.LoadOptions{
		Workspace:       workspace,
		Cwd:             cwd,
		Home:            home,
		ConfigHome:      he.getenv("XDG_CONFIG_HOME"),
		ClaudeConfigDir: he.getenv("CLAUDE_CONFIG_DIR"),
		Settings:        lists["settings"],
		Flags: policy.Flags{
			AllowWrite: lists["allow-write"], AllowRead: lists["allow-read"],
			DenyRead: lists["deny-read"], DenyWrite: lists["deny-write"],
			AllowDomain: lists["allow-domain"], DenyDomain: lists["deny-domain"],
			Memory: scalars["memory"], Pids: scalars["pids"], CPUs: scalars["cpus"], Timeout: scalars["timeout"],
			OutputLimit: scalars["output-limit"], FileSize: scalars["file-size"], OpenFiles: scalars["open-files"], TmpSize: scalars["tmp-size"],
			// Served, the hook is cordon serve's as its runs are (their
			// --serve): unless a settings file turns it off.
			Serve: map[bool]string{true: "true"}[he.served],
		},
	})
	if err != nil {
		return err
	}
	if he.served && (pol.Hooks.PreDecision != nil || !pol.Serve) {
		return errNotServed
	}
	self := he.self
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return fmt.Errorf("cordon's own path: %w", err)
		}
	}
	out, err := pol.AnswerClaude(ctx, in, cwd, cmd.String("mode"), policy.RunCommand{Cordon: self, Flags: runFlags})
	if err != nil || out == nil {
		return err
	}
	enc := json.NewEncoder(he.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// runReport gathers what cordon run tells the post-run hook: the notes
// of the run (refused connections, quarantined files, ...) go to stderr as
// before, and into the report.
type runReport struct {
	mu    sync.Mutex
	r     policy.RunReport
	start time.Time
	// w is where the notes go (cordon's stderr when nil).
	w io.Writer
}

func newRunReport(sb *sandbox) *runReport {
	return &runReport{start: time.Now(), r: policy.RunReport{
		ID: sb.req.ID, Command: sb.req.Args, Workspace: sb.policy.Workspace, Cwd: sb.req.Cwd,
	}}
}

func (rr *runReport) note(msg string) {
	w := rr.w
	if w == nil {
		w = stderr
	}
	fmt.Fprintf(w, "cordon: %s\n", msg)
	rr.mu.Lock()
	rr.r.Violations = append(rr.r.Violations, msg)
	rr.mu.Unlock()
}

// done runs the post-run hook, if the settings name one. Its failure is
// said on stderr and changes nothing: the command has run.
func (rr *runReport) done(ctx context.Context, p *policy.Policy, status int, runErr error) {
	if p.Hooks.PostRun == nil {
		return
	}
	rr.mu.Lock()
	r := rr.r
	rr.mu.Unlock()
	r.ExitStatus, r.DurationMS = status, time.Since(rr.start).Milliseconds()
	if runErr != nil {
		r.ExitStatus, r.Error = -1, runErr.Error()
	}
	// A run ended by a signal still reports; the hook has its own timeout.
	if err := p.PostRun(context.WithoutCancel(ctx), r); err != nil {
		w := rr.w
		if w == nil {
			w = stderr
		}
		fmt.Fprintf(w, "cordon: post-run hook: %v\n", err)
	}
}
