package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// hookBench measures what Claude Code pays on every tool call for cordon's
// PreToolUse hook: n runs of `cordon hook claude` with a typical Bash
// payload, interleaved with /bin/true reading the same payload, and prints
// the medians (the goal: under 10 ms).
func hookBench(cordon string, n int) error {
	ws, err := os.MkdirTemp("", "cordon-bench-hook-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	payload, err := json.Marshal(map[string]any{
		"session_id":      "9f5c3f0e-5d4b-4c2a-9e4b-1f2d3c4b5a69",
		"transcript_path": filepath.Join(ws, "transcript.jsonl"),
		"cwd":             ws,
		"permission_mode": "default",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input": map[string]any{
			"command":     `git status --short && npm test -- --coverage 2>&1 | tail -20`,
			"description": "Run the test suite",
			"timeout":     120000,
		},
		"tool_use_id": "toolu_01BXq5j4mY2n8vG1sQk7dZ3F",
	})
	if err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	cs := []*contender{
		{name: "/bin/true", argv: []string{truePath}, dir: ws, stdin: payload},
		{name: "cordon hook claude", argv: []string{cordon, "hook", "claude"}, dir: ws, stdin: payload},
	}
	once := func(c *contender) (time.Duration, error) {
		d, _, out, err := onceOutput(c)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", c.name, err)
		}
		if c.argv[0] == cordon && !bytes.Contains(out, []byte(`"permissionDecision"`)) {
			return 0, fmt.Errorf("%s answered %s", c.name, out)
		}
		return d, nil
	}
	for _, c := range cs {
		for range 3 {
			if _, err := once(c); err != nil {
				return err
			}
		}
	}
	for range n {
		for _, c := range cs {
			d, err := once(c)
			if err != nil {
				return err
			}
			c.wall = append(c.wall, d)
		}
	}
	fmt.Printf("\ncordon hook claude: a typical Bash PreToolUse payload, %d runs each, interleaved\n\n", n)
	for _, c := range cs {
		fmt.Printf("  %-20s median %s  p90 %s\n", c.name, ms(median(c.wall)), ms(percentile(c.wall, 0.9)))
	}
	hook, base := median(cs[1].wall), median(cs[0].wall)
	verdict := "under"
	if hook >= 10*time.Millisecond {
		verdict = "OVER"
	}
	fmt.Printf("  the hook costs %s more than /bin/true; %s the 10 ms goal\n", ms(hook-base), verdict)
	return nil
}
