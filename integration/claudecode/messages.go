package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Call is one tool call of a script: the tool's name and its input, as
// the model would send them.
type Call struct {
	Tool  string
	Input map[string]any
}

// Result is what Claude Code sent back to the model for one call: the
// tool_result's text and is_error, and when the call left the stand-in
// (its message_stop) and when its result came back.
type Result struct {
	Call    Call
	ID      string // the tool_use id
	Text    string
	IsError bool
	Sent    time.Time
	Got     time.Time
}

// Server stands in for the Messages API (POST /v1/messages, streamed as
// server-sent events, and /v1/messages/count_tokens). It answers the
// requests of Claude Code's agent loop (those that offer the Bash tool)
// with the script's calls in order, one per answer, as tool_use blocks,
// then with a text and end_turn; every other request gets a short text.
// It reads the tool_result of each call from the request that carries it.
type Server struct {
	// URL is ANTHROPIC_BASE_URL for Claude Code.
	URL string
	// Log, when set before the first request, receives the body of every
	// request to /v1/messages (to see what Claude Code sends).
	Log io.Writer
	// Think, when set before the first request, is how long the stand-in
	// takes before each answer to the agent loop, as a model does: what a
	// daemon does between two calls (cordon serve making the next
	// sandbox) is then off the next call's way, as it is with a model.
	Think time.Duration

	script []Call
	idBase string
	srv    *http.Server
	ln     net.Listener

	mu      sync.Mutex
	sent    map[string]time.Time
	results map[string]*Result
	texts   []string // the text blocks of every user message seen, in order, once each
	seen    map[string]bool
	odd     []string // requests the stand-in does not know
}

// Final is the text the stand-in ends every script with.
const Final = "All done."

// idPrefix starts the id of every tool_use block the stand-in sends.
const idPrefix = "toolu_cordon_"

// NewServer starts a stand-in on 127.0.0.1 that plays script.
func NewServer(script []Call) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		script: script,
		idBase: fmt.Sprintf("%s%x_", idPrefix, time.Now().UnixNano()),
		ln:     ln,
		sent:   map[string]time.Time{}, results: map[string]*Result{}, seen: map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens": 1000}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.odd = append(s.odd, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		http.NotFound(w, r)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the stand-in.
func (s *Server) Close() { _ = s.srv.Close() }

// Results returns the result of each call of the script that has one, in
// the script's order; a call whose result never came is missing.
func (s *Server) Results() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Result
	for i := range s.script {
		if r, ok := s.results[s.id(i)]; ok {
			out = append(out, *r)
		}
	}
	return out
}

// Texts returns the text of every block of the user's and the system's
// messages Claude Code sent besides tool results (its prompt,
// notifications of background tasks and monitors, reminders), each once,
// in the order first seen.
func (s *Server) Texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

// Odd returns the requests the stand-in did not know (method and path).
func (s *Server) Odd() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.odd...)
}

func (s *Server) id(i int) string { return fmt.Sprintf("%s%02d", s.idBase, i) }

// request is what the stand-in reads of a Messages API request.
type request struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// block is a content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func blocks(raw json.RawMessage) []block {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []block{{Type: "text", Text: text}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// resultText is a tool_result's content as text: a string, or its text
// blocks joined.
func resultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var req request
	body, err := io.ReadAll(r.Body)
	if err == nil && s.Log != nil {
		s.mu.Lock()
		fmt.Fprintf(s.Log, "=== %s\n%s\n", now.Format("15:04:05.000"), body)
		s.mu.Unlock()
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	agent := false
	for _, t := range req.Tools {
		agent = agent || t.Name == "Bash"
	}
	if !agent {
		s.answer(w, req, nil, "OK.")
		return
	}
	// The step is the number of the script's calls already in the
	// conversation: a retried request gets the same answer.
	step := 0
	s.mu.Lock()
	for _, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			switch {
			case m.Role == "assistant" && b.Type == "tool_use" && strings.HasPrefix(b.ID, s.idBase):
				step++
			case m.Role == "user" && b.Type == "tool_result" && strings.HasPrefix(b.ToolUseID, s.idBase):
				if _, ok := s.results[b.ToolUseID]; !ok {
					var i int
					_, _ = fmt.Sscanf(strings.TrimPrefix(b.ToolUseID, s.idBase), "%d", &i)
					if i < len(s.script) {
						s.results[b.ToolUseID] = &Result{
							Call: s.script[i], ID: b.ToolUseID, Text: resultText(b.Content), IsError: b.IsError,
							Sent: s.sent[b.ToolUseID], Got: now,
						}
					}
				}
			case m.Role != "assistant" && b.Type == "text":
				// (notifications come as messages of role system too)
				if !s.seen[b.Text] {
					s.seen[b.Text] = true
					s.texts = append(s.texts, b.Text)
				}
			}
		}
	}
	s.mu.Unlock()
	time.Sleep(s.Think)
	if step < len(s.script) {
		s.answer(w, req, &s.script[step], s.id(step))
		return
	}
	s.answer(w, req, nil, Final)
}

// answer sends a tool_use block for call (with id), or a text (then id is
// the text), streamed when the request asks for it.
func (s *Server) answer(w http.ResponseWriter, req request, call *Call, id string) {
	model := req.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	var content map[string]any
	stop := "end_turn"
	var input []byte
	if call != nil {
		stop = "tool_use"
		input, _ = json.Marshal(call.Input)
		content = map[string]any{"type": "tool_use", "id": id, "name": call.Tool, "input": json.RawMessage(input)}
	} else {
		content = map[string]any{"type": "text", "text": id}
	}
	msgID := fmt.Sprintf("msg_cordon_%x", time.Now().UnixNano())
	usage := map[string]any{"input_tokens": 1000, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{content}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		if call != nil {
			s.mu.Lock()
			s.sent[id] = time.Now()
			s.mu.Unlock()
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	event := func(name string, data map[string]any) {
		data["type"] = name
		j, _ := json.Marshal(data)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, j)
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1000, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	if call != nil {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": id, "name": call.Tool, "input": map[string]any{},
		}})
		// The input in two pieces, as the API streams it.
		half := len(input) / 2
		for _, part := range []string{string(input[:half]), string(input[half:])} {
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": id}})
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
	_, _ = w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if call != nil {
		s.mu.Lock()
		s.sent[id] = time.Now()
		s.mu.Unlock()
	}
}
