package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/netproxy"
)

// proxyCommand is "cordon proxy": the filtering proxy alone, in the
// foreground, for inspection.
func proxyCommand() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "run the network filtering proxy alone, in the foreground, logging every decision on stderr",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen-http", Value: net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultHTTPPort)), Usage: "address of the HTTP proxy (CONNECT and absolute-form requests)"},
			&cli.StringFlag{Name: "listen-socks", Value: net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultSOCKSPort)), Usage: "address of the SOCKS5 proxy (empty: none)"},
			&cli.StringSliceFlag{Name: "allow-domain", Usage: "allow a destination: example.com, *.example.com, 192.0.2.1, [2001:db8::1], each with an optional :port"},
			&cli.StringSliceFlag{Name: "deny-domain", Usage: "deny a destination (checked before the allowed ones)"},
			&cli.StringFlag{Name: "ask-command", Usage: "a program asked about destinations neither list matches (JSON on stdin and stdout)"},
			&cli.StringFlag{Name: "ask-socket", Usage: "a unix socket asked about destinations neither list matches (one JSON line each way)"},
			&cli.DurationFlag{Name: "ask-timeout", Value: time.Minute, Usage: "how long a question may take before it counts as a refusal"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return fmt.Errorf("proxy takes no arguments (got %q)", cmd.Args().First())
			}
			cfg := netproxy.Config{
				Run:            "proxy",
				AllowedDomains: cmd.StringSlice("allow-domain"),
				DeniedDomains:  cmd.StringSlice("deny-domain"),
				AskTimeout:     cmd.Duration("ask-timeout"),
				OnDecision: func(d netproxy.Decision) {
					fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05.000"), d)
				},
			}
			switch a, s := cmd.String("ask-command"), cmd.String("ask-socket"); {
			case a != "" && s != "":
				return errors.New("--ask-command and --ask-socket exclude each other")
			case a != "":
				cfg.Ask = &netproxy.AskCommand{Path: a, Stderr: stderr}
			case s != "":
				cfg.Ask = &netproxy.AskSocket{Path: s}
			}
			p, err := netproxy.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			var ls []net.Listener
			for _, f := range []struct{ flag, what string }{{"listen-http", "http"}, {"listen-socks", "socks5"}} {
				addr := cmd.String(f.flag)
				if addr == "" {
					continue
				}
				l, err := net.Listen("tcp", addr)
				if err != nil {
					for _, l := range ls {
						l.Close()
					}
					return fmt.Errorf("--%s: %w", f.flag, err)
				}
				ls = append(ls, l)
				fmt.Fprintf(stderr, "cordon proxy: %s on %s\n", f.what, l.Addr())
			}
			if len(ls) == 0 {
				return errors.New("nothing to listen on (--listen-http and --listen-socks are empty)")
			}
			errs := make(chan error, len(ls))
			for _, l := range ls {
				go func() { errs <- p.Serve(l) }()
			}
			select {
			case <-ctx.Done():
				p.Close()
				return nil
			case err := <-errs:
				p.Close()
				return err
			}
		},
	}
}

// proxyConnectCommand is "cordon proxy-connect": the ssh ProxyCommand used
// inside the sandbox, where there is no socat or nc.
func proxyConnectCommand() *cli.Command {
	return &cli.Command{
		Name:      "proxy-connect",
		Usage:     "connect stdin and stdout to HOST:PORT through the sandbox's proxy (an ssh ProxyCommand)",
		ArgsUsage: "HOST PORT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proxy", Usage: "the HTTP proxy's address (default: from $https_proxy or $HTTPS_PROXY, else 127.0.0.1:3128)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "how long connecting may take"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 2 {
				return errors.New("usage: cordon proxy-connect [--proxy ADDR] HOST PORT")
			}
			host := cmd.Args().Get(0)
			port, err := strconv.Atoi(cmd.Args().Get(1))
			if err != nil || port < 1 || port > 65535 {
				return fmt.Errorf("bad port %q", cmd.Args().Get(1))
			}
			proxyAddr := cmd.String("proxy")
			if proxyAddr == "" {
				proxyAddr = proxyFromEnv()
			}
			dctx, cancel := context.WithTimeout(ctx, cmd.Duration("timeout"))
			c, err := netproxy.DialConnect(dctx, proxyAddr, host, port)
			cancel()
			if err != nil {
				return fmt.Errorf("proxy-connect %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
			}
			return netproxy.Pipe(c, os.Stdin, os.Stdout)
		},
	}
}

// proxyFromEnv is the host:port of $https_proxy or $HTTPS_PROXY, or the
// default port on 127.0.0.1.
func proxyFromEnv() string {
	for _, k := range []string{"https_proxy", "HTTPS_PROXY"} {
		if u, err := url.Parse(os.Getenv(k)); err == nil && u.Scheme == "http" && u.Host != "" {
			if u.Port() == "" {
				return net.JoinHostPort(u.Hostname(), "80")
			}
			return u.Host
		}
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultHTTPPort))
}
