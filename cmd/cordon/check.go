package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "print the permission decision for a command or a tool call, as JSON",
		ArgsUsage: "[--] COMMAND | PATH | URL",
		Description: "Decides, without running anything, whether an agent's tool call may be attempted " +
			"(allow, ask or deny), what it requires, whether it would run sandboxed, and why, step by step. " +
			"For Bash (the default) and Monitor the input is one command line (several arguments are joined with spaces); " +
			"for Read, Edit, Write, MultiEdit, NotebookEdit, Glob, Grep, LS and LSP a path; for WebFetch a URL; " +
			"for any other tool nothing or its tool_input as a JSON object (a tool no rule decides is \"defer\": " +
			"Claude Code's own rules decide it). " +
			"--summary prints instead the restrictions text for an agent's system prompt. " +
			"Exit status: 0 when a decision (or the summary) is printed, whatever it is; 125 for bad input " +
			"(no input, bad flags or settings). See docs/claude-code.md.",
		Flags: append(policyFlags(),
			&cli.StringFlag{Name: "tool", Value: "Bash", Usage: "the tool: Bash, Monitor (its command), Read, Edit, Write, MultiEdit, NotebookEdit, Glob, Grep, LS, WebFetch, or any other (its rules only)"},
			&cli.BoolFlag{Name: "dangerously-disable-sandbox", Usage: "the Bash call asks to run outside the sandbox"},
			&cli.BoolFlag{Name: "summary", Usage: "print what the sandbox allows, for an agent's system prompt, instead of a decision"},
		),
		StopOnNthArg: ptr(1),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			pol, err := loadPolicy(cmd)
			if err != nil {
				return err
			}
			// Asked by a person: said every time.
			sayTracked(stderr, pol)
			if cmd.Bool("summary") {
				if cmd.Args().Len() > 0 {
					return fmt.Errorf("--summary takes no input")
				}
				_, err := fmt.Fprint(stdout, pol.Summary())
				return err
			}
			req, err := checkRequest(cmd)
			if err != nil {
				return err
			}
			d, err := pol.Authorize(ctx, req)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(d)
		},
	}
}

// checkRequest turns cordon check's command line into a request.
func checkRequest(cmd *cli.Command) (policy.Request, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return policy.Request{}, fmt.Errorf("working directory: %w", err)
	}
	req := policy.Request{Tool: cmd.String("tool"), Cwd: cwd, DisableSandbox: cmd.Bool("dangerously-disable-sandbox")}
	args := cmd.Args().Slice()
	one := func(what string) (string, error) {
		if len(args) != 1 || args[0] == "" {
			return "", fmt.Errorf("%s takes one %s (usage: cordon check --tool %s -- %s)", req.Tool, what, req.Tool, strings.ToUpper(what))
		}
		return args[0], nil
	}
	switch req.Tool {
	case "Bash", "Monitor":
		if len(args) == 0 {
			return req, fmt.Errorf("no command given (usage: cordon check [flags] -- 'COMMAND')")
		}
		req.Command = strings.Join(args, " ")
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS", "NotebookRead", "LSP":
		req.Path, err = one("path")
	case "WebFetch":
		req.URL, err = one("url")
	default:
		// The tool's input, as Claude Code sends it, for the rules that
		// name its parameters (Agent(model:opus)).
		switch {
		case len(args) > 1:
			return req, fmt.Errorf("%s takes at most one input, its tool_input as a JSON object", req.Tool)
		case len(args) == 1:
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(args[0]), &obj); err != nil || obj == nil {
				return req, fmt.Errorf("%s: the input must be its tool_input, a JSON object", req.Tool)
			}
			req.Input = json.RawMessage(args[0])
		}
	}
	if req.DisableSandbox && req.Tool != "Bash" {
		return req, fmt.Errorf("--dangerously-disable-sandbox is for Bash")
	}
	return req, err
}
