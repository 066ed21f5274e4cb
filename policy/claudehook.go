package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// JudgedTools are the Claude Code tools cordon decides by what they do
// (the Bash command, the file's path, the URL), sorted: the matcher of
// the hook cordon install writes. Any other tool is decided by the rules
// that name it alone.
func JudgedTools() []string {
	tools := []string{"Monitor", "LSP"} // judged as Bash, as Read (Request.kind)
	for t := range toolKinds {
		tools = append(tools, t)
	}
	slices.Sort(tools)
	return tools
}

// ClaudeHookTimeout is the hook's timeout cordon install writes: longer
// than the longest pre-decision hook cordon accepts, which the hook may
// wait for. Claude Code lets a call through, unsandboxed, when it cancels
// a hook at its timeout.
const ClaudeHookTimeout = maxHookTimeout + time.Minute

// ClaudeHook is cordon's PreToolUse hook in a Claude Code settings file.
type ClaudeHook struct {
	// Event is the hook's event, PreToolUse for the one cordon installs.
	Event string
	// Matcher is the group's matcher: which tools it runs for.
	Matcher string
	// Command is the command line Claude Code runs (through a shell).
	Command string
	// Timeout is the hook's timeout in seconds, 0 when it names none.
	Timeout float64
	// Alone: the hook is the only one of its group.
	Alone bool
}

// ClaudeHookEntry is the hook cordon install writes for the cordon binary
// at path.
func ClaudeHookEntry(path string) ClaudeHook {
	return ClaudeHook{
		Event:   EventPreToolUse,
		Matcher: strings.Join(JudgedTools(), "|"),
		Command: ShellQuote(path) + " hook claude",
		Timeout: ClaudeHookTimeout.Seconds(),
		Alone:   true,
	}
}

// CordonCommand reports whether a hook's command line runs cordon's
// Claude Code hook (a program named cordon..., then "hook claude"), and
// returns the program as written.
func CordonCommand(command string) (string, bool) {
	words := shellWords(command)
	if len(words) < 3 || words[1] != "hook" || words[2] != "claude" || !strings.HasPrefix(filepath.Base(words[0]), "cordon") {
		return "", false
	}
	return words[0], true
}

// shellWords splits a command line into words as a shell would, quotes
// and backslashes removed, as far as plain words go (enough to find the
// program and its first arguments).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			w.WriteByte(s[i])
		default:
			in = true
			w.WriteByte(c)
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// ErrNotSettings is the error of a settings file that is not a JSON
// object.
var ErrNotSettings = errors.New("not a JSON object")

// settingsRoot parses a Claude Code settings file; an empty one is an
// empty object.
func settingsRoot(data []byte) (*node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &node{kind: kindObject}, nil
	}
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	if root.kind != kindObject {
		return nil, fmt.Errorf("1:1: %w", ErrNotSettings)
	}
	return root, nil
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// hookAt is where a hook sits: hooks.<event>[group].hooks[index].
type hookAt struct {
	event        string
	group, index int
	hook         ClaudeHook
}

// claudeHooks lists the hooks of a settings file's "hooks" object that
// run cordon, in the file's order.
func claudeHooks(root *node) []hookAt {
	var out []hookAt
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != kindObject {
		return nil
	}
	for _, ev := range hooks.members {
		if ev.value.kind != kindArray {
			continue
		}
		for gi, g := range ev.value.items {
			list := g.get("hooks")
			if list == nil || list.kind != kindArray {
				continue
			}
			for hi, h := range list.items {
				cmd := h.get("command")
				if cmd == nil || cmd.kind != kindString {
					continue
				}
				if _, ok := CordonCommand(cmd.text); !ok {
					continue
				}
				found := ClaudeHook{Event: ev.key, Command: cmd.text, Alone: len(list.items) == 1}
				if m := g.get("matcher"); m != nil && m.kind == kindString {
					found.Matcher = m.text
				}
				if t := h.get("timeout"); t != nil && t.kind == kindNumber {
					_, _ = fmt.Sscan(t.text, &found.Timeout)
				}
				if typ := h.get("type"); typ == nil || typ.kind != kindString || typ.text != "command" {
					found.Command = "" // not a command hook: not one that runs
				}
				out = append(out, hookAt{event: ev.key, group: gi, index: hi, hook: found})
			}
		}
	}
	return out
}

// ClaudeHooks lists the hooks of a Claude Code settings file that run
// cordon's hook (a hook that is not of type command has no Command).
func ClaudeHooks(data []byte) ([]ClaudeHook, error) {
	root, err := settingsRoot(data)
	if err != nil {
		return nil, err
	}
	var out []ClaudeHook
	for _, at := range claudeHooks(root) {
		out = append(out, at.hook)
	}
	return out, nil
}

// ClaudeSwitches are the keys of a Claude Code settings file that decide
// whether cordon's hook runs and how: sandbox.enabled (Claude Code's own
// sandbox, under which cordon would run inside bubblewrap),
// disableAllHooks, and allowManagedHooksOnly (in managed settings: no
// other file's hook runs).
type ClaudeSwitches struct {
	Sandbox, DisableAllHooks, ManagedHooksOnly bool
}

// ReadClaudeSwitches reads the switches of a Claude Code settings file.
func ReadClaudeSwitches(data []byte) (ClaudeSwitches, error) {
	root, err := settingsRoot(data)
	if err != nil {
		return ClaudeSwitches{}, err
	}
	on := func(n *node) bool { return n != nil && n.kind == kindBool && n.boolean }
	return ClaudeSwitches{
		Sandbox:          on(root.get("sandbox").get("enabled")),
		DisableAllHooks:  on(root.get("disableAllHooks")),
		ManagedHooksOnly: on(root.get("allowManagedHooksOnly")),
	}, nil
}

// InstallClaudeHook returns a Claude Code settings file with h (see
// ClaudeHookEntry) as the one hook of cordon's for its event, in a group
// of its own at the end of the event's list: any other hook of cordon's
// for that event goes. Everything else is kept byte for byte, and what is
// added follows the file's indentation. changed is false when the file
// had h already, exactly.
func InstallClaudeHook(data []byte, h ClaudeHook) (out []byte, changed bool, err error) {
	root, err := settingsRoot(data)
	if err != nil {
		return nil, false, err
	}
	var mine []hookAt
	for _, at := range claudeHooks(root) {
		if at.event == h.Event {
			mine = append(mine, at)
		}
	}
	if len(mine) == 1 && mine[0].hook == h {
		return data, false, nil
	}
	out = data
	for {
		var done bool
		if out, done, err = removeFirst(out, func(at hookAt) bool { return at.event == h.Event }); err != nil {
			return nil, false, err
		}
		if done {
			break
		}
	}
	out, err = appendGroup(out, h)
	return out, true, err
}

// UninstallClaudeHook returns a Claude Code settings file without any of
// cordon's hooks, of any event; a group, an event's list or the "hooks"
// object left empty by that goes too. changed is false when there was
// none.
func UninstallClaudeHook(data []byte) (out []byte, changed bool, err error) {
	out = data
	for {
		var done bool
		if out, done, err = removeFirst(out, func(hookAt) bool { return true }); err != nil {
			return nil, false, err
		}
		if done {
			return out, changed, nil
		}
		changed = true
	}
}

// removeFirst removes the first of cordon's hooks that match, with the
// containers it alone kept from being empty; done when there is none.
func removeFirst(data []byte, match func(hookAt) bool) (out []byte, done bool, err error) {
	root, err := settingsRoot(data)
	if err != nil {
		return nil, false, err
	}
	for _, at := range claudeHooks(root) {
		if !match(at) {
			continue
		}
		hooks := root.get("hooks")
		events := hooks.get(at.event)
		group := events.items[at.group]
		list := group.get("hooks")
		switch {
		case len(list.items) > 1:
			return removeItem(data, list, at.index), false, nil
		case len(events.items) > 1:
			return removeItem(data, events, at.group), false, nil
		case len(hooks.members) > 1:
			return removeMember(data, hooks, at.event), false, nil
		default:
			return removeMember(data, root, "hooks"), false, nil
		}
	}
	return data, true, nil
}

func splice(data []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(text))
	out = append(out, data[:from]...)
	out = append(out, text...)
	return append(out, data[to:]...)
}

// removeItem removes array element i with the comma that joined it.
func removeItem(data []byte, arr *node, i int) []byte {
	items := arr.items
	switch {
	case len(items) == 1:
		return splice(data, arr.off+1, arr.end-1, "")
	case i > 0:
		return splice(data, items[i-1].end, items[i].end, "")
	default:
		return splice(data, items[0].off, items[1].off, "")
	}
}

// removeMember removes an object's member with the comma that joined it.
func removeMember(data []byte, obj *node, key string) []byte {
	ms := obj.members
	i := slices.IndexFunc(ms, func(m member) bool { return m.key == key })
	switch {
	case len(ms) == 1:
		return splice(data, obj.off+1, obj.end-1, "")
	case i > 0:
		return splice(data, ms[i-1].value.end, ms[i].value.end, "")
	default:
		return splice(data, ms[0].keyOff, ms[1].keyOff, "")
	}
}

// hookGroup is a group of hooks as Claude Code's settings hold it.
type hookGroup struct {
	Matcher string      `json:"matcher"`
	Hooks   []hookEntry `json:"hooks"`
}

type hookEntry struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"`
}

// appendGroup adds a group holding h alone at the end of hooks.<event>,
// making the "hooks" object and the event's list when missing.
func appendGroup(data []byte, h ClaudeHook) ([]byte, error) {
	root, err := settingsRoot(data)
	if err != nil {
		return nil, err
	}
	group := hookGroup{Matcher: h.Matcher, Hooks: []hookEntry{{Type: "command", Command: h.Command, Timeout: h.Timeout}}}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
		if root, err = parseJSON(data); err != nil {
			return nil, err
		}
	}
	f := styleOf(data, root)
	hooks := root.get("hooks")
	switch {
	case hooks == nil:
		return f.addMember(data, root, "hooks", map[string][]hookGroup{h.Event: {group}})
	case hooks.kind != kindObject:
		return nil, fmt.Errorf("%d:%d: hooks is not an object", hooks.pos.Line, hooks.pos.Col)
	}
	events := hooks.get(h.Event)
	switch {
	case events == nil:
		return f.addMember(data, hooks, h.Event, []hookGroup{group})
	case events.kind != kindArray:
		return nil, fmt.Errorf("%d:%d: hooks.%s is not an array", events.pos.Line, events.pos.Col, h.Event)
	}
	return f.addItem(data, events, group)
}

// style is how a settings file is laid out: its indentation unit (none
// for a file on one line) and its line ending.
type style struct{ unit, nl string }

// styleOf finds the indentation of the file's first nested line (two
// spaces when none is nested yet, none when it is all on one line).
func styleOf(data []byte, root *node) style {
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	if !bytes.Contains(bytes.TrimSpace(data), []byte("\n")) && len(root.members) > 0 {
		return style{nl: nl}
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.TrimSpace(trimmed) != "" && len(trimmed) < len(line) {
			return style{unit: line[:len(line)-len(trimmed)], nl: nl}
		}
	}
	return style{unit: "  ", nl: nl}
}

// indentAt is the indentation of the line that holds off.
func indentAt(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// render writes v as JSON for a line indented by indent.
func (f style) render(v any, indent string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if f.unit != "" {
		enc.SetIndent(indent, f.unit)
	}
	_ = enc.Encode(v) // hook groups always encode
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", f.nl)
}

func (f style) colon() string {
	if f.unit == "" {
		return ":"
	}
	return ": "
}

// addMember adds "key": v as obj's last member.
func (f style) addMember(data []byte, obj *node, key string, v any) ([]byte, error) {
	k, _ := json.Marshal(key)
	if len(obj.members) > 0 {
		last := obj.members[len(obj.members)-1]
		indent := indentAt(data, last.keyOff)
		sep := data[obj.off+1 : obj.members[0].keyOff]
		if len(obj.members) > 1 {
			prev := obj.members[len(obj.members)-2]
			sep = bytes.TrimPrefix(bytes.TrimLeft(data[prev.value.end:last.keyOff], " \t\r\n"), []byte(","))
		}
		text := "," + string(sep) + string(k) + f.colon() + f.render(v, indent)
		return splice(data, last.value.end, last.value.end, text), nil
	}
	if f.unit == "" {
		return splice(data, obj.off+1, obj.end-1, string(k)+f.colon()+f.render(v, "")), nil
	}
	outer := indentAt(data, obj.off)
	inner := outer + f.unit
	text := f.nl + inner + string(k) + f.colon() + f.render(v, inner) + f.nl + outer
	return splice(data, obj.off+1, obj.end-1, text), nil
}

// addItem adds v as arr's last element.
func (f style) addItem(data []byte, arr *node, v any) ([]byte, error) {
	if len(arr.items) > 0 {
		last := arr.items[len(arr.items)-1]
		indent := indentAt(data, last.off)
		sep := data[arr.off+1 : arr.items[0].off]
		if len(arr.items) > 1 {
			prev := arr.items[len(arr.items)-2]
			sep = bytes.TrimPrefix(bytes.TrimLeft(data[prev.end:last.off], " \t\r\n"), []byte(","))
		}
		if !bytes.Contains(sep, []byte("\n")) {
			f.unit = "" // elements on one line: the new one too
		}
		text := "," + string(sep) + f.render(v, indent)
		return splice(data, last.end, last.end, text), nil
	}
	if f.unit == "" {
		return splice(data, arr.off+1, arr.end-1, f.render(v, "")), nil
	}
	outer := indentAt(data, arr.off)
	inner := outer + f.unit
	text := f.nl + inner + f.render(v, inner) + f.nl + outer
	return splice(data, arr.off+1, arr.end-1, text), nil
}
