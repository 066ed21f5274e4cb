package claudecode

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// post sends a Messages API request and returns the events of the answer
// (type and data), or for a request that does not stream, the message.
func post(t *testing.T, url string, body any) []string {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func TestServer(t *testing.T) {
	s, err := NewServer([]Call{{Tool: "Bash", Input: map[string]any{"command": "ls -l", "description": "List"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := []map[string]any{{"name": "Bash"}, {"name": "Read"}}
	user := map[string]any{"role": "user", "content": "Do the task."}

	// A request of the agent loop gets the script's first call, streamed.
	got := post(t, s.URL+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}})
	var types []string
	var input, id string
	for _, l := range got {
		data, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type, ID, Name string
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		types = append(types, ev.Type)
		if ev.Type == "content_block_start" {
			id = ev.ContentBlock.ID
			if ev.ContentBlock.Type != "tool_use" || ev.ContentBlock.Name != "Bash" {
				t.Errorf("block %+v", ev.ContentBlock)
			}
		}
		if ev.Delta.Type == "input_json_delta" {
			input += ev.Delta.PartialJSON
		}
		if ev.Type == "message_delta" && ev.Delta.StopReason != "tool_use" {
			t.Errorf("stop_reason %q", ev.Delta.StopReason)
		}
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if input != `{"command":"ls -l","description":"List"}` {
		t.Errorf("input %s", input)
	}

	// A side request (no Bash among the tools) and count_tokens get short
	// answers and change nothing.
	if got := post(t, s.URL+"/v1/messages", map[string]any{"model": "m", "messages": []any{user}}); len(got) != 1 || !strings.Contains(got[0], `"text":"OK."`) {
		t.Errorf("side request: %q", got)
	}
	if got := post(t, s.URL+"/v1/messages/count_tokens", map[string]any{"messages": []any{user}}); len(got) != 1 || !strings.Contains(got[0], "input_tokens") {
		t.Errorf("count_tokens: %q", got)
	}

	// The tool's result comes back: it is recorded, and the script being
	// over, the answer is the final text.
	history := []any{
		user,
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": id, "is_error": true, "content": []any{map[string]any{"type": "text", "text": "Exit code 2"}}},
			map[string]any{"type": "text", "text": "a reminder"},
		}},
		map[string]any{"role": "system", "content": "a notification"},
	}
	got = post(t, s.URL+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": history})
	if !strings.Contains(strings.Join(got, "\n"), `"text":"`+Final+`"`) || !strings.Contains(strings.Join(got, "\n"), `"stop_reason":"end_turn"`) {
		t.Errorf("after the script: %q", got)
	}
	rs := s.Results()
	if len(rs) != 1 || rs[0].Text != "Exit code 2" || !rs[0].IsError || rs[0].ID != id || rs[0].Got.Before(rs[0].Sent) {
		t.Errorf("results %+v", rs)
	}
	if diff := cmp.Diff([]string{"Do the task.", "a reminder", "a notification"}, s.Texts()); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if resp, err := http.Get(s.URL + "/api/hello"); err != nil || resp.StatusCode != 404 || len(s.Odd()) != 1 {
		t.Errorf("an unknown request: %v %v %q", resp, err, s.Odd())
	}
}
