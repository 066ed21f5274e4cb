package shell

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tableContext is where the commands of testdata/commands.txt run.
var tableContext = Context{
	Workspace: "/home/u/proj",
	Home:      "/home/u",
	Cwd:       "/home/u/proj",
	Writable:  []string{"/tmp"},
}

type tableCase struct {
	line     int
	level    Level
	outcome  string // allow, deny, none
	command  string
	findings []string // substrings of some finding
	rules    string
}

type ruleSet struct {
	allow, deny Patterns
}

// loadTable reads testdata/commands.txt: rule sets (@rules NAME, @allow
// SPEC, @deny SPEC) and cases (LEVEL OUTCOME COMMAND [## FINDING]...).
func loadTable(t *testing.T) ([]tableCase, map[string]*ruleSet) {
	t.Helper()
	f, err := os.Open("testdata/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sets := map[string]*ruleSet{}
	var cur string
	var cases []tableCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@rules "); ok {
			cur = strings.TrimSpace(rest)
			sets[cur] = &ruleSet{}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@allow "); ok {
			p, err := ParsePattern(strings.TrimSpace(rest))
			if err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			sets[cur].allow = append(sets[cur].allow, p)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@deny "); ok {
			p, err := ParsePattern(strings.TrimSpace(rest))
			if err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			sets[cur].deny = append(sets[cur].deny, p)
			continue
		}
		parts := strings.Split(line, " ## ")
		fields := strings.Fields(parts[0])
		if len(fields) < 3 {
			t.Fatalf("line %d: want LEVEL OUTCOME COMMAND", n)
		}
		tc := tableCase{line: n, outcome: fields[1], rules: cur}
		switch fields[0] {
		case "RO":
			tc.level = ReadOnly
		case "WW":
			tc.level = WorkspaceWrite
		case "DF":
			tc.level = DangerFullAccess
		default:
			t.Fatalf("line %d: level %q", n, fields[0])
		}
		if tc.outcome != "allow" && tc.outcome != "deny" && tc.outcome != "none" {
			t.Fatalf("line %d: outcome %q", n, tc.outcome)
		}
		// the command is what follows the two fields, as written
		cmd := strings.TrimSpace(parts[0])
		cmd = strings.TrimSpace(strings.TrimPrefix(cmd, fields[0]))
		cmd = strings.TrimSpace(strings.TrimPrefix(cmd, fields[1]))
		if q, ok := strings.CutPrefix(cmd, "q:"); ok {
			if cmd, err = strconv.Unquote(q); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
		}
		tc.command = cmd
		for _, p := range parts[1:] {
			tc.findings = append(tc.findings, strings.TrimSpace(p))
		}
		cases = append(cases, tc)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases, sets
}

// outcome applies a rule set the way the permission engine does: deny
// first, then allow.
func outcome(s *Script, rs *ruleSet) string {
	if _, ok := rs.deny.Match(s); ok {
		return "deny"
	}
	if ok, _ := rs.allow.Allow(s); ok {
		return "allow"
	}
	return "none"
}

func TestTable(t *testing.T) {
	cases, sets := loadTable(t)
	if len(cases) < 200 {
		t.Errorf("the table has %d cases, want at least 200", len(cases))
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d", tc.line), func(t *testing.T) {
			s, _ := Parse(tc.command)
			cl := Classify(s, tableContext)
			type result struct {
				Level   string
				Outcome string
			}
			want := result{tc.level.String(), tc.outcome}
			got := result{cl.Level.String(), outcome(s, sets[tc.rules])}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("line %d %q (-want +got):\n%s\nfindings: %v", tc.line, tc.command, diff, cl.Findings)
			}
			for _, f := range tc.findings {
				found := false
				for _, g := range cl.Findings {
					found = found || strings.Contains(g.String(), f)
				}
				if !found {
					t.Errorf("line %d %q: no finding contains %q; findings: %v", tc.line, tc.command, f, cl.Findings)
				}
			}
			// every level above read-only is explained
			if cl.Level > ReadOnly && len(cl.Findings) == 0 {
				t.Errorf("line %d %q: level %v without findings", tc.line, tc.command, cl.Level)
			}
		})
	}
}
