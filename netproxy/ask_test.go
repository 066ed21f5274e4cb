package netproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ask.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAskCommand(t *testing.T) {
	requireTool(t, "sh")
	q := Question{Run: "run-3", Host: "example.com", Port: 443}
	stdin := filepath.Join(t.TempDir(), "stdin")
	tests := []struct {
		name    string
		body    string
		allow   bool
		reason  string
		wantErr string
	}{
		{name: "allow", body: "cat > " + stdin + "\necho '{\"allow\": true}'\n", allow: true},
		{name: "refuse", body: "echo '{\"allow\":false}'\n"},
		{name: "refuse with a reason", body: "echo '{\"allow\":false,\"reason\":\"use the mirror\"}'\n", reason: "use the mirror"},
		{name: "an allow's reason is dropped", body: "echo '{\"allow\":true,\"reason\":\"fine\"}'\n", allow: true},
		{name: "a reason that is not a string", body: "echo '{\"allow\":false,\"reason\":7}'\n", wantErr: "bad answer"},
		{name: "unknown keys ignored", body: "echo '{\"allow\":true,\"remember\":\"forever\"}'\n", allow: true},
		{name: "exit status", body: "echo '{\"allow\":true}'; exit 3\n", wantErr: "exit status 3"},
		{name: "no answer", body: "exit 0\n", wantErr: "no answer"},
		{name: "not a boolean", body: "echo '{\"allow\":\"yes\"}'\n", wantErr: "bad answer"},
		{name: "no allow key", body: "echo '{}'\n", wantErr: `no boolean "allow"`},
		{name: "two answers", body: "echo '{\"allow\":false}{\"allow\":true}'\n", wantErr: "more than one"},
		{name: "garbage", body: "echo yes\n", wantErr: "bad answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &AskCommand{Path: script(t, tc.body)}
			reply, err := a.Ask(context.Background(), q)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Ask = %+v, %v; want an error with %q", reply, err, tc.wantErr)
				}
				if reply.Allow {
					t.Fatal("an error must not allow")
				}
				return
			}
			if want := (Reply{Allow: tc.allow, Reason: tc.reason}); err != nil || reply != want {
				t.Fatalf("Ask = %+v, %v; want %+v", reply, err, want)
			}
		})
	}
	var got Question
	data, err := os.ReadFile(stdin)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil || got != q {
		t.Errorf("the command read %q; want the question %+v as JSON", data, q)
	}
}

func TestAskCommandTimeout(t *testing.T) {
	requireTool(t, "sh")
	// the grandchild sleep keeps stdout open after sh is killed
	a := &AskCommand{Path: script(t, "sleep 30\necho '{\"allow\":true}'\n")}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	reply, err := a.Ask(ctx, Question{Host: "x.test", Port: 1})
	if reply.Allow || err == nil {
		t.Fatalf("Ask = %+v, %v; want a refusal by timeout", reply, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the timeout took %v", el)
	}
}

// askServer serves the unix-socket protocol with answer, one line per
// question, and records the questions.
func askServer(t *testing.T, answer func(Question) string) (path string, questions chan Question) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ask") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	questions = make(chan Question, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					var q Question
					if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
						return
					}
					questions <- q
					a := answer(q)
					if a == "" {
						time.Sleep(time.Hour)
					}
					c.Write([]byte(a))
				}
			}()
		}
	}()
	return path, questions
}

func TestAskSocket(t *testing.T) {
	path, questions := askServer(t, func(q Question) string {
		switch q.Host {
		case "yes.test":
			return "{\"allow\":true}\n"
		case "no.test":
			return "{\"allow\":false}\n"
		case "reason.test":
			return "{\"allow\":false,\"reason\":\"use the mirror\"}\n"
		case "garbage.test":
			return "maybe\n"
		case "long.test":
			return strings.Repeat(" ", 70<<10) + "{\"allow\":true}\n"
		case "slow.test":
			return ""
		}
		return "\n"
	})
	a := &AskSocket{Path: path}
	for _, tc := range []struct {
		host    string
		allow   bool
		reason  string
		wantErr string
	}{
		{host: "yes.test", allow: true},
		{host: "no.test"},
		{host: "reason.test", reason: "use the mirror"},
		{host: "garbage.test", wantErr: "bad answer"},
		{host: "empty.test", wantErr: "no answer"},
		{host: "long.test", wantErr: "too long"},
		{host: "slow.test", wantErr: "deadline"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			reply, err := a.Ask(ctx, Question{Run: "r9", Host: tc.host, Port: 22})
			if tc.wantErr != "" {
				if reply.Allow || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Ask = %+v, %v; want an error with %q", reply, err, tc.wantErr)
				}
			} else if want := (Reply{Allow: tc.allow, Reason: tc.reason}); err != nil || reply != want {
				t.Fatalf("Ask = %+v, %v; want %+v", reply, err, want)
			}
			if q := <-questions; q != (Question{Run: "r9", Host: tc.host, Port: 22}) {
				t.Errorf("server got %+v", q)
			}
		})
	}
	if _, err := (&AskSocket{Path: path + ".missing"}).Ask(context.Background(), Question{}); err == nil {
		t.Error("a missing socket allowed")
	}
}
