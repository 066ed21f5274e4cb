package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// nodeProxyJS is a CONNECT proxy built as sandbox-runtime builds its own
// (src/sandbox/http-proxy.ts and stream-relay.ts): Node's http server,
// whose 'connect' event dials the target with net.connect and relays each
// direction with paused-mode read() and write(). No filtering: only the
// relay is measured, the part the throughput goal is about.
const nodeProxyJS = `
const http = require('http'), net = require('net');
function relay(src, dst) {
  const pump = () => {
    let chunk;
    while ((chunk = src.read()) !== null) {
      if (!dst.write(chunk)) { dst.once('drain', pump); return; }
    }
    src.once('readable', pump);
  };
  pump();
  src.once('end', () => dst.end());
}
const server = http.createServer((req, res) => { res.writeHead(405); res.end(); });
server.on('connect', (req, client, head) => {
  const i = req.url.lastIndexOf(':');
  const upstream = net.connect(Number(req.url.slice(i + 1)), req.url.slice(0, i), () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head && head.length) upstream.write(head);
    relay(upstream, client);
    relay(client, upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
});
server.listen(0, '127.0.0.1', () => console.log('listening on 127.0.0.1:' + server.address().port));
`

// startNodeProxy runs nodeProxyJS with node from $PATH.
func startNodeProxy() (addr string, pid int, stop func(), err error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", 0, nil, err
	}
	dir, err := os.MkdirTemp("", "cordon-bench-node-")
	if err != nil {
		return "", 0, nil, err
	}
	script := filepath.Join(dir, "proxy.js")
	if err := os.WriteFile(script, []byte(nodeProxyJS), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", 0, nil, err
	}
	cmd := exec.Command(node, script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", 0, nil, fmt.Errorf("node: %w", err)
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	}
	timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(out)
	if sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			return a, cmd.Process.Pid, stop, nil
		}
	}
	stop()
	return "", 0, nil, errors.New("the node proxy did not say where it listens")
}
