package runtime

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// List returns the sandboxes recorded under root, oldest first.
func List(root string) ([]Sandbox, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Sandbox
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "rootfs" {
			continue
		}
		sb, ok := load(root, e.Name())
		if ok {
			out = append(out, sb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

func load(root, id string) (Sandbox, bool) {
	sb := Sandbox{ID: id, Status: "unknown"}
	data, err := os.ReadFile(stateFile(root, id, metaFile))
	if err != nil {
		return sb, false
	}
	var m Meta
	if json.Unmarshal(data, &m) != nil {
		return sb, false
	}
	sb.Owner, sb.Args, sb.Workspace, sb.Created = m.Owner, m.Args, m.Workspace, m.Created
	sb.Orphaned = !alive(m.Owner, m.OwnerTime)
	if c, err := libcontainer.Load(root, id); err == nil {
		if st, err := c.Status(); err == nil {
			sb.Status = st.String()
		}
		if s, err := c.State(); err == nil {
			sb.Pid = s.InitProcessPid
		}
	} else {
		sb.Status = "stopped"
	}
	return sb, true
}

// GC removes what runs whose cordon process is gone left behind: their
// processes, cgroups and state. It returns the ids it removed.
func GC(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "rootfs" {
			continue
		}
		id := e.Name()
		if !orphaned(root, id) {
			continue
		}
		if c, err := libcontainer.Load(root, id); err == nil {
			if st, err := c.Status(); err == nil && st != libcontainer.Stopped {
				_ = c.Signal(unix.SIGKILL)
			}
			destroy(c)
		}
		if m, err := readMeta(root, id); err == nil && m.Scrub != "" {
			scrub(&specs.Spec{Annotations: map[string]string{spec.AnnotationScrub: m.Scrub}}, id, m.Created)
		}
		// State libcontainer cannot load (a crash between its create
		// and its first save) goes too.
		if err := os.RemoveAll(filepath.Join(root, id)); err == nil {
			removed = append(removed, id)
		}
	}
	return removed, nil
}

// orphaned reports whether the sandbox id under root belongs to a cordon
// process that is gone. A sandbox being created right now has no record
// yet; without a readable one it counts as orphaned only once its
// directory is old enough.
func orphaned(root, id string) bool {
	m, err := readMeta(root, id)
	if err != nil {
		fi, err := os.Stat(filepath.Join(root, id))
		return err == nil && time.Since(fi.ModTime()) > time.Minute
	}
	return !alive(m.Owner, m.OwnerTime)
}

func readMeta(root, id string) (Meta, error) {
	var m Meta
	data, err := os.ReadFile(stateFile(root, id, metaFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(data, &m)
}
