package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DialConnect opens a tunnel to host:port through the HTTP proxy at
// proxyAddr with CONNECT. A refusal is a *RefusedError carrying the proxy's
// explanation. It is the client of "cordon proxy-connect", the ssh
// ProxyCommand inside the sandbox.
func DialConnect(ctx context.Context, proxyAddr, host string, port int) (net.Conn, error) {
	if strings.ContainsAny(host, " \t\r\n/@") || host == "" {
		return nil, fmt.Errorf("%w %q", ErrHost, host)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", proxyAddr)
	if err != nil {
		return nil, fmt.Errorf("connect to the proxy: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	authority := net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority); err != nil {
		c.Close()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
		c.Close()
		return nil, &RefusedError{
			Reason:  Reason(resp.Header.Get("X-Proxy-Error")),
			Status:  resp.Status,
			Message: strings.TrimSpace(string(b)),
		}
	}
	if !stop() {
		c.Close()
		return nil, ctx.Err()
	}
	if br.Buffered() > 0 {
		// the server spoke first (an ssh banner) and its bytes came with
		// the answer
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn reads what the bufio.Reader holds before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes the end of the client's stream on.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// Pipe copies in to c and c to out until c's side ends, passing the end of
// in on as a half close. It is the body of an ssh ProxyCommand.
func Pipe(c net.Conn, in io.Reader, out io.Writer) error {
	go func() {
		if _, err := io.Copy(c, in); err == nil {
			if cw, ok := c.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
				return
			}
		}
		c.Close()
	}()
	_, err := io.Copy(out, c)
	c.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
