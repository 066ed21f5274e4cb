//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runc "github.com/containerd/go-runc"
	"golang.org/x/sys/unix"
)

// TestEscapeOCIHostView: cordon's init binds the host's top-level entries
// named in a memfd called cordon-host-view at descriptor 9, which cordon's
// own runs hand it. An OCI caller's preserved descriptors land at the same
// numbers: one crafted as such a memfd must not make the init bind the host
// (here its /etc) into a container whose spec never asked for it.
func TestEscapeOCIHostView(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	id := ociID("hostview")
	bundle := ociBundle(t, []string{"sh", "-c", "if [ -e /etc/debian_version ]; then echo host-etc-bound; else echo clean; fi"}, nil)
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		t.Fatalf("the host's /etc/debian_version, which the test looks for: %v", err)
	}
	r := ociRunc(t, bundle)

	// Descriptors 3 to 8 are nothing in particular, 9 the crafted view.
	var files []*os.File
	for range 6 {
		null, err := os.Open(os.DevNull)
		must(t, err)
		defer null.Close()
		files = append(files, null)
	}
	fd, err := unix.MemfdCreate("cordon-host-view", unix.MFD_CLOEXEC)
	must(t, err)
	view := os.NewFile(uintptr(fd), "cordon-host-view")
	defer view.Close()
	_, err = fmt.Fprintf(view, "cordon host view 1\nroot %s\nd etc\n", filepath.Join(bundle, "rootfs"))
	must(t, err)
	files = append(files, view)

	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	err = r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, ExtraFiles: files})
	if err == nil {
		must(t, r.Start(ctx, id))
		out := readUntil(t, pio.Stdout().(*os.File), "\n")
		if strings.Contains(out, "host-etc-bound") {
			t.Fatalf("a preserved memfd named cordon-host-view had the init bind the host's /etc into the container")
		}
		t.Fatalf("create with a crafted host view at descriptor 9 succeeded (the container said %q), want it refused", out)
	}
	if msg := lastLogError(t, r.Log); !strings.Contains(msg, "cordon-host-view") {
		t.Errorf("create: %v, log %q, want the crafted host view named", err, msg)
	}
}
