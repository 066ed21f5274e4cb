//go:build linux

package integration

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestNetwork: the sandbox has its own network namespace with loopback
// only: the host's 127.0.0.1 and the outside world are out of reach, the
// sandbox's own loopback works.
func TestNetwork(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("only loopback", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh(`ls /sys/class/net; echo --; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo --; cat /sys/class/net/lo/operstate`)
			if r.code != 0 {
				t.Fatalf("listing interfaces failed:\n%s", r)
			}
			if want := "lo\n--\nlo\n--\n"; !strings.HasPrefix(r.stdout, want) {
				t.Errorf("want loopback only (/sys/class/net and /proc/net/dev):\n%s", r)
			}
		})
		t.Run("host 127.0.0.1 unreachable", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			b := newBox(t, c)
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			must(t, err)
			defer l.Close()
			var accepted atomic.Int32
			go func() {
				for {
					conn, err := l.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					conn.Close()
				}
			}()
			port := l.Addr().(*net.TCPAddr).Port
			// The control: the listener does accept from the host.
			if conn, err := net.DialTimeout("tcp4", l.Addr().String(), 2*time.Second); err != nil {
				t.Fatalf("the host's listener does not accept on the host: %v", err)
			} else {
				conn.Close()
			}
			time.Sleep(50 * time.Millisecond)
			base := accepted.Load()
			r := b.run("bash", "-c", fmt.Sprintf("echo hello > /dev/tcp/127.0.0.1/%d", port))
			if r.code == 0 {
				t.Errorf("connected to the host's 127.0.0.1:%d from inside:\n%s", port, r)
			}
			time.Sleep(200 * time.Millisecond)
			if n := accepted.Load() - base; n != 0 {
				t.Errorf("the host's listener on 127.0.0.1:%d saw %d connections from inside", port, n)
			}
		})
		t.Run("outside unreachable", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			b := newBox(t, c)
			for _, addr := range []string{"192.0.2.1/80", "1.1.1.1/443", "8.8.8.8/53"} {
				r := b.run("bash", "-c", "echo > /dev/tcp/"+addr)
				if r.code == 0 || !strings.Contains(r.stderr, "Network is unreachable") {
					t.Errorf("connect to %s: want \"Network is unreachable\":\n%s", addr, r)
				}
			}
		})
		t.Run("own loopback reachable", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			b := newBox(t, c)
			script := fmt.Sprintf(`
%s=listen %q 127.0.0.1:4242 > /tmp/listener.out &
i=0
until grep -q listening /tmp/listener.out; do i=$((i+1)); [ $i -gt 200 ] && { cat /tmp/listener.out; exit 98; }; sleep 0.02; done
echo hello-from-inside > /dev/tcp/127.0.0.1/4242 || exit 97
wait $!
cat /tmp/listener.out`, helperEnv, helperBin)
			r := b.run("bash", "-c", script)
			if r.code != 0 || !strings.Contains(r.stdout, "got: hello-from-inside") {
				t.Errorf("a listener on 127.0.0.1 inside is not reachable inside:\n%s", r)
			}
		})
	})
}
