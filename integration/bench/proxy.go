package main

// The network proxy's figures: cordon proxy, a process of its own as it is
// during a run, against direct loopback transfers on the same machine,
// interleaved. Throughput of one large transfer through a CONNECT tunnel, a
// SOCKS5 tunnel and a forwarded plain-HTTP response (goal: at least 0.8x
// direct), and the time from dialling to the first byte of a new
// connection (the cost the proxy adds per connection).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// transferSize is the size of one throughput sample.
const transferSize = 256 << 20

// proxyBench measures cordon's proxy; n is the number of connections per
// contender for the latency figures (transfers: n/10, at least 5). When
// compare names another cordon binary, its proxy runs too, interleaved with
// the first, and its rows carry its name: a change measured against the
// binary before it in one run.
func proxyBench(cordon, compare string, n int) error {
	bins := []string{cordon}
	if compare != "" {
		bins = append(bins, compare)
	}
	type proxy struct {
		label               string // "" for the first binary
		httpAddr, socksAddr string
		pid                 int
	}
	var proxies []proxy
	for i, bin := range bins {
		pp, err := startProxy(bin, nil)
		if err != nil {
			return err
		}
		defer pp.stop()
		p := proxy{httpAddr: pp.httpAddr, socksAddr: pp.socksAddr, pid: pp.pid}
		if i > 0 {
			p.label = " (" + filepath.Base(bin) + ")"
		}
		proxies = append(proxies, p)
	}
	bulk, err := serveTCP(func(c net.Conn) { writeN(c, transferSize) })
	if err != nil {
		return err
	}
	defer bulk.Close()
	first, err := serveTCP(func(c net.Conn) { c.Write([]byte{'x'}) })
	if err != nil {
		return err
	}
	defer first.Close()
	web, err := serveHTTP()
	if err != nil {
		return err
	}
	defer web.Close()

	type path struct {
		name string
		pid  int // the proxy's, 0 for direct
		open func(target string) (io.Reader, net.Conn, error)
	}
	tunnels := []path{
		{"direct", 0, func(t string) (io.Reader, net.Conn, error) { c, err := net.Dial("tcp", t); return c, c, err }},
	}
	webPaths := []path{
		{"direct HTTP GET", 0, func(t string) (io.Reader, net.Conn, error) { return get(t, "/") }},
	}
	for _, p := range proxies {
		tunnels = append(tunnels,
			path{"CONNECT tunnel" + p.label, p.pid, func(t string) (io.Reader, net.Conn, error) { return dialConnect(p.httpAddr, t) }},
			path{"SOCKS5 tunnel" + p.label, p.pid, func(t string) (io.Reader, net.Conn, error) { return dialSOCKS(p.socksAddr, t) }})
		webPaths = append(webPaths,
			path{"HTTP GET via proxy" + p.label, p.pid, func(t string) (io.Reader, net.Conn, error) { return get(p.httpAddr, "http://"+t+"/") }})
	}

	// The reference's design: a Node CONNECT proxy as sandbox-runtime's.
	if addr, pid, stop, err := startNodeProxy(); err == nil {
		defer stop()
		tunnels = append(tunnels, path{nodePath, pid, func(t string) (io.Reader, net.Conn, error) { return dialConnect(addr, t) }})
	} else {
		fmt.Fprintf(os.Stderr, "bench: no Node proxy to compare (it needs node on $PATH): %v\n", err)
	}

	// The kernel's sockmap redirect, for the record (root only).
	bulkPaths := tunnels
	if relay, err := startSockmapRelay(bulk.Addr().String()); err == nil {
		defer relay.Close()
		bulkPaths = append(slices.Clone(tunnels), path{sockmapPath, 0, func(string) (io.Reader, net.Conn, error) {
			c, err := net.Dial("tcp", relay.Addr())
			if err != nil {
				return nil, nil, err
			}
			// the relay passes no close on: read what the server sends
			return io.LimitReader(c, transferSize), c, nil
		}})
	} else {
		fmt.Fprintf(os.Stderr, "bench: no sockmap relay to compare (it needs CAP_BPF and CAP_NET_ADMIN): %v\n", err)
	}

	runs := max(5, n/10)
	rates := map[string][]float64{}
	cpu := map[string]time.Duration{} // the proxy's, during the path's transfers
	once := func(p path, target string) error {
		cpu0 := cpuTime(p.pid)
		start := time.Now()
		r, c, err := p.open(target)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		got, err := drain(r)
		c.Close()
		if err != nil || got != transferSize {
			return fmt.Errorf("%s: read %d of %d bytes: %v", p.name, got, transferSize, err)
		}
		rates[p.name] = append(rates[p.name], float64(got)/time.Since(start).Seconds())
		cpu[p.name] += cpuTime(p.pid) - cpu0
		return nil
	}
	for range runs + 1 { // the first round warms up
		for _, p := range bulkPaths {
			if err := once(p, bulk.Addr().String()); err != nil {
				return err
			}
		}
		for _, p := range webPaths {
			if err := once(p, web.Addr().String()); err != nil {
				return err
			}
		}
	}
	latency := map[string][]time.Duration{}
	for i := range n + 10 {
		for _, p := range tunnels {
			start := time.Now()
			r, c, err := p.open(first.Addr().String())
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			var b [1]byte
			_, err = io.ReadFull(r, b[:])
			d := time.Since(start)
			c.Close()
			if err != nil {
				return fmt.Errorf("%s: first byte: %w", p.name, err)
			}
			if i >= 10 {
				latency[p.name] = append(latency[p.name], d)
			}
		}
	}

	fmt.Printf("\ncordon proxy: throughput of one %d MiB loopback transfer, %d runs each, interleaved\n\n", transferSize>>20, runs)
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "path\tmedian\tworst\tvs direct\tproxy CPU per GiB\t")
	for _, group := range [][]path{bulkPaths, webPaths} {
		base := medianF(rates[group[0].name][1:])
		for _, p := range group {
			rs := rates[p.name][1:]
			perGiB := "-"
			if p.pid != 0 && cpu[p.name] > 0 {
				perGiB = fmt.Sprintf("%d ms", (cpu[p.name] * (1 << 30) / time.Duration(len(rates[p.name])*transferSize)).Milliseconds())
			}
			fmt.Fprintf(w, "%s\t%.2f GB/s\t%.2f GB/s\t%.2fx\t%s\t\n", p.name, medianF(rs)/1e9, minF(rs)/1e9, medianF(rs)/base, perGiB)
		}
	}
	w.Flush()
	fmt.Println("\nOn loopback a proxied byte crosses two TCP connections instead of one; when the")
	fmt.Println("machine's CPUs are saturated that, not the copy (spliced in the kernel), sets the ratio.")
	if slices.ContainsFunc(tunnels, func(p path) bool { return p.name == nodePath }) {
		fmt.Printf("%q: a CONNECT proxy built as sandbox-runtime's (Node's http server, net.connect,\n", nodePath)
		fmt.Println("paused-mode read/write relay), the host leg only: its bridge into the sandbox adds two socat relays.")
	}
	if len(bulkPaths) > len(tunnels) {
		fmt.Printf("%q: the bench's own relay through the kernel's sockmap (SK_SKB verdict,\n", sockmapPath)
		fmt.Println("bpf_sk_redirect_hash), which cordon does not use; its CPU is a kernel worker's, not shown.")
	}
	fmt.Printf("\ncordon proxy: dial to first byte of a new connection, %d connections each, interleaved\n\n", n)
	w = tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "path\tmedian\tp90\tadded\tvs direct\t")
	base := median(latency["direct"])
	for _, p := range tunnels {
		m := median(latency[p.name])
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.2fx\t\n", p.name, us(m), us(percentile(latency[p.name], 0.9)), us(m-base), float64(m)/float64(base))
	}
	w.Flush()
	return nil
}

// sockmapPath names the sockmap relay's row, nodePath the Node proxy's.
const (
	sockmapPath = "sockmap redirect (not cordon's)"
	nodePath    = "CONNECT via Node (sandbox-runtime's design)"
)

func us(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s { // insertion sort: a handful of samples
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func minF(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// cpuTime is the user and system time of process pid so far (Linux
// /proc; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// fields after the command name, which is in parentheses: state is
	// the first, utime and stime the 12th and 13th
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

// proxyProcess is a running "cordon proxy".
type proxyProcess struct {
	httpAddr, socksAddr string
	pid                 int
	// said is what it said on stderr before it listened
	said []string
	stop func()
}

// startProxy runs "cordon proxy" on two free loopback ports, allowing
// 127.0.0.1 and any more arguments, with env added to the bench's
// environment.
func startProxy(cordon string, env []string, args ...string) (*proxyProcess, error) {
	cmd := exec.Command(cordon, append([]string{"proxy", "--listen-http", "127.0.0.1:0", "--listen-socks", "127.0.0.1:0", "--allow-domain", "127.0.0.1"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cordon proxy: %w", err)
	}
	p := &proxyProcess{pid: cmd.Process.Pid, stop: func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}}
	sc := bufio.NewScanner(errPipe)
	timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	for (p.httpAddr == "" || p.socksAddr == "") && sc.Scan() {
		line := sc.Text()
		if a, ok := strings.CutPrefix(line, "cordon proxy: http on "); ok {
			p.httpAddr = a
		} else if a, ok := strings.CutPrefix(line, "cordon proxy: socks5 on "); ok {
			p.socksAddr = a
		} else {
			p.said = append(p.said, line)
		}
	}
	if p.httpAddr == "" || p.socksAddr == "" {
		p.stop()
		return nil, fmt.Errorf("cordon proxy did not say where it listens: %q", p.said)
	}
	// its decision log must not fill the pipe
	go io.Copy(io.Discard, errPipe)
	return p, nil
}

func serveTCP(handle func(net.Conn)) (net.Listener, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return l, nil
}

func serveHTTP() (net.Listener, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(transferSize))
		writeN(w, transferSize)
	}))
	return l, nil
}

var chunk = make([]byte, 1<<20)

func writeN(w io.Writer, n int) {
	for n > 0 {
		k, err := w.Write(chunk[:min(n, len(chunk))])
		if err != nil {
			return
		}
		n -= k
	}
}

func drain(r io.Reader) (int, error) {
	buf := make([]byte, 1<<20)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func dialConnect(proxyAddr, target string) (io.Reader, net.Conn, error) {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("CONNECT %s: %w", target, err)
	}
	return br, c, nil
}

func dialSOCKS(proxyAddr, target string) (io.Reader, net.Conn, error) {
	ap, err := netip.ParseAddrPort(target)
	if err != nil {
		return nil, nil, err
	}
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, nil, err
	}
	ip := ap.Addr().As4()
	req := []byte{5, 1, 0, 5, 1, 0, 1, ip[0], ip[1], ip[2], ip[3], byte(ap.Port() >> 8), byte(ap.Port())}
	var rep [12]byte // method selection (2) and reply (10)
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, nil, err
	}
	if _, err := io.ReadFull(c, rep[:]); err != nil || rep[3] != 0 {
		c.Close()
		return nil, nil, fmt.Errorf("SOCKS5 %s: reply %d, %v", target, rep[3], err)
	}
	return c, c, nil
}

// get sends one GET for target (a path, or an absolute URL to a proxy) and
// returns the body.
func get(addr, target string) (io.Reader, net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("GET %s: %w", target, err)
	}
	return resp.Body, c, nil
}
